package sessions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"syscall"
	"time"

	"github.com/agentd/agentd/acp"
	"github.com/agentd/agentd/detect"
)

// An ACP session runs an agent that speaks the Agent Client Protocol on its
// stdio, with no PTY: a prompt in flight is working, a pending
// session/request_permission is blocked (the request itself, not a guess),
// and the turn's stopReason says how it ended.

// ErrNoScreen refuses screen methods on an ACP session.
var ErrNoScreen = errors.New("an ACP session has no terminal screen")

// ErrTurnRunning refuses a prompt while the previous one runs.
var ErrTurnRunning = errors.New("a prompt turn is already running; wait for it or cancel it")

// ErrNotACP refuses ACP methods on a PTY session.
var ErrNotACP = errors.New("this is a PTY session, not an ACP one")

// acpDriver runs an agent over ACP: its client's pending permissions and
// turn are what a look decides on, text is a prompt turn, and an answer
// is the permission's reply. What it holds is guarded by the session's mu.
type acpDriver struct {
	s       *Session
	client  *acp.Client
	turn    bool   // a prompt is in flight
	outcome string // how the last turn ended, until the next one starts
	ended   bool   // a turn has ended since the last prompt
	// keys maps the promptId shown to the editor to the permission's key.
	keys map[string]string
	info acp.AgentInfo
	// login is the id of the PTY session running the agent's terminal
	// login, when it needed one (see startLogin).
	login string
	// authNeeded is the agent's message when it refused the last prompt
	// for want of a login; the state is error until the next prompt.
	authNeeded string
}

func newACPDriver(s *Session) *acpDriver { return &acpDriver{s: s, keys: map[string]string{}} }

// start starts the ACP agent. An agent that logs in in a terminal (and
// was asked to with spec.AuthMethod) gets its login run first: see
// startLogin.
func (d *acpDriver) start(argv, env []string, spec SpawnSpec) error {
	s := d.s
	s.readDone = make(chan struct{})
	s.exitDone = make(chan struct{})
	s.started = time.Now()
	s.env = env
	c, err := d.run(argv, env, spec, false)
	var need *acp.LoginNeededError
	if errors.As(err, &need) {
		return d.startLogin(argv, env, spec, need)
	}
	if err != nil {
		return err
	}
	d.client = c
	d.info = c.Info()
	s.Pid = c.Pid()
	s.nameACP(spec, d.info)
	go d.wait()
	return nil
}

// begin: the handshake is done, the agent is ready (or its login runs).
func (d *acpDriver) begin() { go d.s.update() }

// run runs the agent and its handshake.
func (d *acpDriver) run(argv, env []string, spec SpawnSpec, loggedIn bool) (*acp.Client, error) {
	s := d.s
	return acp.Start(context.Background(), acp.Options{
		Argv: argv, Env: env, Cwd: s.Cwd, Log: s.mgr.opts.Log.With("session", s.ID),
		PermissionTimeout: s.mgr.opts.PermissionTimeout,
		AuthMethod:        spec.AuthMethod,
		LoggedIn:          loggedIn,
		Terminals:         newPTYTerminals(s.mgr, s),
		Handler: acp.HandlerFuncs{
			OnUpdate:     func(u acp.Update) { s.mgr.events.Update(s.ID, u.Raw) },
			OnPermission: func(acp.Permission) { s.update() },
			OnPermissionSettled: func(st acp.Settled) {
				if st.Reason == acp.SettledTimeout {
					s.mgr.opts.Log.Warn("permission unanswered: answered with the agent's reject option", "session", s.ID, "option", st.OptionID)
					s.mu.Lock()
					s.machine.permissionTimedOut()
					s.mu.Unlock()
				}
				s.update()
			},
			OnExited: func(acp.Exit) {},
		},
	})
}

// clientNow is the running agent; nil while its login runs.
func (d *acpDriver) clientNow() *acp.Client {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	return d.client
}

// nameACP names a session from what its agent said in initialize, where
// the spawn and the manifests left it open.
func (s *Session) nameACP(spec SpawnSpec, info acp.AgentInfo) {
	if s.manifest.Name == detect.Generic {
		s.agent = spec.Agent
		if s.agent == "" {
			s.agent = info.Name
		}
	}
	s.machine.named(s.agentName())
	s.lastPublished.Agent = s.machine.state.Agent
	if spec.Name != "" {
		return
	}
	switch {
	case s.manifest.Name != detect.Generic && s.manifest.Display != "":
		// A display manifest named it already (Spawn).
	case info.Title != "":
		s.Name = info.Title
	case info.Name != "":
		s.Name = info.Name
	}
}

// wait ends the session once the agent's client is done.
func (d *acpDriver) wait() {
	s := d.s
	<-d.client.Done()
	e := d.client.Exit()
	close(s.readDone)
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	s.finish(&ExitStatus{Code: e.Code, Signal: e.Signal}, State{})
}

// acpPrompt turns an ACP permission into the prompt editors show. Its id
// also covers the request's key, so two pending requests that read the
// same are still told apart, and the session's salt (machine.salt), so
// two sessions' are too.
func acpPrompt(p acp.Permission, salt string) *detect.Prompt {
	pr := &detect.Prompt{Kind: "permission", Question: p.Title, Options: []detect.Option{}, Subject: acpSubject(p)}
	for _, o := range p.Options {
		kind := ""
		switch {
		case strings.HasPrefix(o.Kind, "allow"):
			kind = "allow"
		case strings.HasPrefix(o.Kind, "reject"):
			kind = "reject"
		}
		pr.Options = append(pr.Options, detect.Option{ID: o.ID, Label: o.Name, Kind: kind})
	}
	if pr.Question == "" && pr.Subject != nil {
		pr.Question = pr.Subject.Text // better than no question at all
	}
	pr.Seal()
	key := pr.Content + "\x00" + p.Key
	if salt != "" {
		key = salt + "\x00" + key
	}
	h := sha256.Sum256([]byte(key))
	pr.ID = hex.EncodeToString(h[:8])
	return pr
}

// acpSubject is what an ACP permission asks to approve, from its tool call.
func acpSubject(p acp.Permission) *detect.Subject {
	return toolCall{kind: p.Kind, title: p.Title, input: p.RawInput, paths: p.Paths, diffs: p.Diffs}.subject()
}

// decideACP is the ACP half of the one place that decides (machine.step):
// a pending permission is blocked (the oldest shown first), a prompt in
// flight is working, a turn that ended is done until seen.
func decideACP(a acpFacts, seen, timedOut bool) State {
	switch {
	case a.pending != nil:
		return State{Name: Blocked, Source: SourceACP, Reason: "acp.request_permission", Prompt: a.pending}
	case a.turn && timedOut:
		return State{Name: Working, Source: SourceACP, Reason: "acp.permission_timeout"}
	case a.turn:
		return State{Name: Working, Source: SourceACP, Reason: "acp.prompt"}
	case a.authNeeded != "":
		// The agent cannot go on until someone logs in: design.md's
		// error, as osc7501.auth is for a terminal agent.
		return State{Name: Error, Source: SourceACP, Reason: "acp.auth_required", Message: a.authNeeded}
	case a.ended && !seen:
		return State{Name: Done, Outcome: a.outcome, Source: SourceACP, Reason: "acp.stop_reason"}
	}
	return State{Name: Idle, Source: SourceACP, Reason: "acp.ready"}
}

// facts reads the client's pending permissions and turn; none while the
// agent's login runs (startLogin set the state).
func (d *acpDriver) facts() (facts, bool) {
	s := d.s
	c := d.clientNow()
	if c == nil {
		return facts{}, false
	}
	pending := c.Pending()
	var f acpFacts
	s.locked(func() {
		s.faultPoint("acp")
		f = acpFacts{turn: d.turn, ended: d.ended, outcome: d.outcome, authNeeded: d.authNeeded}
		if len(pending) > 0 {
			f.pending = acpPrompt(pending[0], s.machine.salt)
			d.keys[f.pending.ID] = pending[0].Key
		}
	})
	return facts{acp: &f}, true
}

// changed: an ACP session decides on its messages, not on output.
func (d *acpDriver) changed() {}

// send: an ACP agent takes text as a prompt turn.
func (d *acpDriver) send(text string, _ bool) error { return d.s.Prompt(text) }

// release: the agent's output ends with its client (waitACP); an agent
// whose login never let it start had none.
func (d *acpDriver) release() {
	if d.client == nil {
		close(d.s.readDone)
	}
}

func (d *acpDriver) describe(in *Info) {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	info := d.info
	in.AgentInfo = &info
	in.Login = d.login
}

// hangUp ends the agent the ACP way (stdin closed, SIGHUP, SIGKILL in
// time), or, while its login runs, the session and the login.
func (d *acpDriver) hangUp() bool {
	c := d.clientNow()
	if c == nil {
		d.endLogin(loginStopped)
		return false
	}
	_ = c.Close()
	return true
}

// Prompt sends a prompt turn to an ACP agent; the turn runs on, and its
// end is reported as done with the agent's outcome. Prompt and Cancel are
// ACP's own methods: a PTY session has no turn to start or cancel.
func (s *Session) Prompt(text string) error {
	t, err := s.turns()
	if err != nil {
		return err
	}
	if s.isExited() {
		return ErrExited
	}
	return t.prompt(text)
}

func (d *acpDriver) prompt(text string) error {
	s := d.s
	c := d.clientNow()
	if c == nil {
		return ErrLoggingIn
	}
	s.mu.Lock()
	if d.turn {
		s.mu.Unlock()
		return ErrTurnRunning
	}
	d.turn, d.ended, d.authNeeded = true, false, ""
	s.machine.tasked()
	s.mu.Unlock()
	s.update()
	go func() {
		stop, err := c.Prompt(context.Background(), text)
		outcome, authNeeded := acp.Outcome(stop), ""
		var auth *acp.AuthRequiredError
		switch {
		case errors.As(err, &auth):
			s.mgr.opts.Log.Warn("the agent needs a login", "session", s.ID, "err", err)
			authNeeded = auth.Message
			if authNeeded == "" {
				authNeeded = "authentication required"
			}
		case err != nil && !errors.Is(err, acp.ErrExited):
			s.mgr.opts.Log.Warn("prompt turn failed", "session", s.ID, "err", err)
			outcome = "failed"
		}
		s.mu.Lock()
		d.turn, d.ended, d.outcome, d.authNeeded = false, authNeeded == "", outcome, authNeeded
		s.mu.Unlock()
		s.update()
	}()
	return nil
}

// Cancel cancels an ACP turn; pending permissions are answered cancelled.
func (s *Session) Cancel() error {
	t, err := s.turns()
	if err != nil {
		return err
	}
	if s.isExited() {
		return ErrExited
	}
	return t.cancel()
}

func (d *acpDriver) cancel() error {
	c := d.clientNow()
	if c == nil {
		return ErrLoggingIn
	}
	err := c.Cancel()
	d.s.update()
	return err
}

// answer answers the permission promptID names with optionID; st is the
// state just decided.
func (d *acpDriver) answer(st State, promptID, optionID, _ string) (State, error) {
	s := d.s
	s.mu.Lock()
	key, ok := d.keys[promptID]
	s.mu.Unlock()
	if !ok || st.Name != Blocked {
		return st, &StaleError{Answered: promptID, Current: st.Prompt}
	}
	if optionID == "" {
		return st, ErrNotAnswerable
	}
	switch err := d.clientNow().Answer(key, optionID); {
	case errors.Is(err, acp.ErrUnknownPermission):
		return st, &StaleError{Answered: promptID, Current: st.Prompt}
	case errors.Is(err, acp.ErrUnknownOption):
		return st, ErrUnknownOption
	case err != nil:
		return st, err
	}
	s.mu.Lock()
	delete(d.keys, promptID)
	s.mu.Unlock()
	return s.update(), nil
}

// signal signals an ACP agent; SIGHUP ends it the ACP way (stdin closed,
// SIGHUP, SIGKILL after a grace period).
func (d *acpDriver) signal(sig syscall.Signal) error {
	s := d.s
	c := d.clientNow()
	if c == nil {
		// Its login runs and the agent does not: any signal ends both.
		d.endLogin(loginStopped)
		return nil
	}
	if sig == syscall.SIGHUP {
		return c.Close()
	}
	if err := syscall.Kill(-s.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

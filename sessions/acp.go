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

// acpState is what the ACP client has told about the session.
type acpState struct {
	client *acp.Client
	turn   bool // a prompt is in flight
	// timedOut: agentd answered the last permission with the agent's
	// reject option because nobody did in time; the state says so.
	timedOut bool
	outcome  string // how the last turn ended, until the next one starts
	ended    bool   // a turn has ended since the last prompt
	// keys maps the promptId shown to the editor to the permission's key.
	keys map[string]string
}

// startACP starts an ACP agent for s.
func (s *Session) startACP(argv, env []string) error {
	s.acp = &acpState{keys: map[string]string{}}
	s.changed = make(chan struct{}, 1)
	s.readDone = make(chan struct{})
	s.exitDone = make(chan struct{})
	s.started = time.Now()
	s.env = env
	c, err := acp.Start(context.Background(), acp.Options{
		Argv: argv, Env: env, Cwd: s.Cwd, Log: s.mgr.opts.Log.With("session", s.ID),
		PermissionTimeout: s.mgr.opts.PermissionTimeout,
		Terminals:         newPTYTerminals(s.mgr, s),
		Handler: acp.HandlerFuncs{
			OnUpdate:     func(u acp.Update) { s.mgr.events.Update(s.ID, u.Raw) },
			OnPermission: func(acp.Permission) { s.update() },
			OnPermissionSettled: func(st acp.Settled) {
				if st.Reason == acp.SettledTimeout {
					s.mgr.opts.Log.Warn("permission unanswered: answered with the agent's reject option", "session", s.ID, "option", st.OptionID)
					s.mu.Lock()
					s.acp.timedOut = true
					s.mu.Unlock()
				}
				s.update()
			},
			OnExited: func(acp.Exit) {},
		},
	})
	if err != nil {
		return err
	}
	s.acp.client = c
	s.Pid = c.Pid()
	go s.waitACP()
	return nil
}

func (s *Session) waitACP() {
	<-s.acp.client.Done()
	e := s.acp.client.Exit()
	close(s.readDone)
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	st := &ExitStatus{Code: e.Code, Signal: e.Signal}
	s.mu.Lock()
	exitState := s.exitedLocked(st)
	s.mu.Unlock()
	s.mgr.tellKeeper('-', s.Pid)
	s.mgr.publish(s, exitState)
	s.mgr.events.Exited(s.ID, *st)
	s.mgr.ended(s)
	close(s.exitDone)
}

// acpPrompt turns an ACP permission into the prompt editors show. Its id
// also covers the request's key, so two pending requests that read the
// same are still told apart.
func acpPrompt(p acp.Permission) *detect.Prompt {
	pr := &detect.Prompt{Kind: "permission", Question: p.Title, Options: []detect.Option{}}
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
	h := sha256.Sum256([]byte(detect.Fingerprint(pr) + "\x00" + p.Key))
	pr.ID = hex.EncodeToString(h[:8])
	return pr
}

// decideACP is the ACP half of the one place that decides: a pending
// permission is blocked (the oldest shown first), a prompt in flight is
// working, a turn that ended is done until seen.
func decideACP(pending []acp.Permission, turn, ended bool, outcome string, seen, timedOut bool) State {
	switch {
	case len(pending) > 0:
		return State{Name: Blocked, Source: SourceACP, Reason: "acp.request_permission", Prompt: acpPrompt(pending[0])}
	case turn && timedOut:
		return State{Name: Working, Source: SourceACP, Reason: "acp.permission_timeout"}
	case turn:
		return State{Name: Working, Source: SourceACP, Reason: "acp.prompt"}
	case ended && !seen:
		return State{Name: Done, Outcome: outcome, Source: SourceACP, Reason: "acp.stop_reason"}
	}
	return State{Name: Idle, Source: SourceACP, Reason: "acp.ready"}
}

// updateACP decides and publishes an ACP session's state.
func (s *Session) updateACP() State {
	pending := s.acp.client.Pending()
	s.mu.Lock()
	if s.exited != nil {
		st := s.state
		s.mu.Unlock()
		return st
	}
	if len(pending) > 0 || !s.acp.turn {
		s.acp.timedOut = false
	}
	next := decideACP(pending, s.acp.turn, s.acp.ended, s.acp.outcome, s.seen, s.acp.timedOut)
	next.Agent = s.manifest.Name
	if next.Name == Working || next.Name == Blocked {
		s.seen = false
	}
	if next.Prompt != nil {
		s.acp.keys[next.Prompt.ID] = pending[0].Key
	}
	st, changed := s.setStateLocked(next)
	s.mu.Unlock()
	if changed {
		s.mgr.publish(s, st)
	}
	return st
}

// Prompt sends a prompt turn to an ACP agent; the turn runs on, and its
// end is reported as done with the agent's outcome.
func (s *Session) Prompt(text string) error {
	if s.acp == nil {
		return ErrNotACP
	}
	if s.isExited() {
		return ErrExited
	}
	s.mu.Lock()
	if s.acp.turn {
		s.mu.Unlock()
		return ErrTurnRunning
	}
	s.acp.turn, s.acp.ended, s.input = true, false, true
	s.mu.Unlock()
	s.update()
	go func() {
		stop, err := s.acp.client.Prompt(context.Background(), text)
		outcome := acp.Outcome(stop)
		if err != nil && !errors.Is(err, acp.ErrExited) {
			s.mgr.opts.Log.Warn("prompt turn failed", "session", s.ID, "err", err)
			outcome = "failed"
		}
		s.mu.Lock()
		s.acp.turn, s.acp.ended, s.acp.outcome = false, true, outcome
		s.mu.Unlock()
		s.update()
	}()
	return nil
}

// Cancel cancels an ACP turn; pending permissions are answered cancelled.
func (s *Session) Cancel() error {
	if s.acp == nil {
		return ErrNotACP
	}
	if s.isExited() {
		return ErrExited
	}
	err := s.acp.client.Cancel()
	s.update()
	return err
}

// answerACP answers the permission promptID names with optionID.
func (s *Session) answerACP(promptID, optionID string) (State, error) {
	st := s.update()
	s.mu.Lock()
	key, ok := s.acp.keys[promptID]
	s.mu.Unlock()
	if !ok || st.Name != Blocked {
		return st, &StaleError{Answered: promptID, Current: st.Prompt}
	}
	if optionID == "" {
		return st, ErrNotAnswerable
	}
	switch err := s.acp.client.Answer(key, optionID); {
	case errors.Is(err, acp.ErrUnknownPermission):
		return st, &StaleError{Answered: promptID, Current: st.Prompt}
	case errors.Is(err, acp.ErrUnknownOption):
		return st, ErrUnknownOption
	case err != nil:
		return st, err
	}
	s.mu.Lock()
	s.input = true
	delete(s.acp.keys, promptID)
	s.mu.Unlock()
	return s.update(), nil
}

// signalACP signals an ACP agent; SIGHUP ends it the ACP way (stdin
// closed, SIGHUP, SIGKILL after a grace period).
func (s *Session) signalACP(sig syscall.Signal) error {
	if sig == syscall.SIGHUP {
		return s.acp.client.Close()
	}
	if err := syscall.Kill(-s.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

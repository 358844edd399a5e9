package sessions

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentd/agentd/acp"
)

// An ACP agent that logs in in a terminal (Copilot CLI's "copilot login")
// is spawned with that method as spec.AuthMethod. agentd then runs the
// login the agent named, as a PTY session of its own that the editor shows
// like any other, and holds the ACP session in error (acp.login) meanwhile:
// a person has to act. When the login exits 0 agentd starts the agent again
// and opens its session; when it fails, or someone stops either session,
// the ACP session ends and its state says why. The command run is always
// the one the agent sent in initialize, never one a client sent.

// ErrLoggingIn refuses prompts to an ACP session whose login still runs.
var ErrLoggingIn = errors.New("the agent does not run yet: its login is still running")

// loginStopped is the message of a login ended by a person.
const loginStopped = "stopped before the login ended"

// startLogin runs need's terminal login and leaves the session waiting on
// it.
func (d *acpDriver) startLogin(argv, env []string, spec SpawnSpec, need *acp.LoginNeededError) error {
	s := d.s
	m := need.Method
	loginEnv := map[string]*string{}
	for k, v := range spec.Env {
		loginEnv[k] = v
	}
	for k, v := range m.Env {
		loginEnv[k] = &v
	}
	name := m.Label
	if name == "" {
		name = m.Name
	}
	if name == "" {
		name = filepath.Base(m.Command) + " login"
	}
	login, err := s.mgr.Spawn(SpawnSpec{
		Argv: append([]string{m.Command}, m.Args...), Cwd: spec.Cwd, BaseEnv: spec.BaseEnv, Env: loginEnv,
		Name: name, Origin: spec.Origin, Hooks: new(bool),
	})
	if err != nil {
		return fmt.Errorf("start the login %s of %s: %w", m.ID, need.Agent.Name, err)
	}
	d.info = need.Agent
	d.login = login.ID
	s.nameACP(spec, need.Agent)
	s.lastPublished = s.machine.held(State{Agent: s.agentName(), Name: Error, Source: SourceACP, Reason: "acp.login",
		Message: fmt.Sprintf("log in in session %s (%s); the agent starts when it ends", login.ID, name)}, time.Now())
	s.mgr.opts.Log.Info("the agent logs in first", "session", s.ID, "login", login.ID, "method", m.ID)
	go d.afterLogin(login, argv, env, spec)
	return nil
}

// afterLogin starts the agent once its login exited 0, or ends the session.
func (d *acpDriver) afterLogin(login *Session, argv, env []string, spec SpawnSpec) {
	s := d.s
	<-login.Exited()
	if s.isExited() {
		return // stopped meanwhile
	}
	ex := login.Info().Exit
	if ex == nil || ex.Code != 0 || ex.Signal != "" {
		why := "the login did not finish"
		if ex != nil && ex.Signal != "" {
			why = "the login ended by " + ex.Signal
		} else if ex != nil {
			why = fmt.Sprintf("the login exited %d", ex.Code)
		}
		d.endLogin(why)
		return
	}
	c, err := d.run(argv, env, spec, true)
	if err != nil {
		d.endLogin("after the login the agent did not start: " + err.Error())
		return
	}
	s.updateMu.Lock()
	s.mu.Lock()
	if s.exited != nil {
		s.mu.Unlock()
		s.updateMu.Unlock()
		_ = c.Close()
		return
	}
	d.client, d.info, s.Pid = c, c.Info(), c.Pid()
	s.mu.Unlock()
	s.updateMu.Unlock()
	s.mgr.tellKeeper('+', s.Pid)
	go d.wait()
	s.update()
}

// endLogin ends an ACP session that never ran its agent, saying why, and
// its login session if that still runs.
func (d *acpDriver) endLogin(why string) {
	s := d.s
	s.updateMu.Lock()
	s.mu.Lock()
	started := s.exited != nil || d.client != nil
	loginID := d.login
	s.mu.Unlock()
	if started {
		s.updateMu.Unlock()
		return
	}
	s.mgr.opts.Log.Warn("the agent did not start after its login", "session", s.ID, "login", loginID, "why", why)
	s.finish(&ExitStatus{Code: -1}, State{Name: Exited, Source: SourceACP, Reason: "acp.login_failed", Message: why})
	s.updateMu.Unlock()
	if login, err := s.mgr.Get(loginID); err == nil && why == loginStopped {
		_ = login.Signal(syscall.SIGHUP)
	}
}

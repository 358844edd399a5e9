package sessions

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// spawnFakeACPLogin starts the fake ACP agent needing its terminal login
// (see TestMain), asked to use it, and returns the ACP session and its
// login's session.
func spawnFakeACPLogin(t *testing.T, m *Manager) (s, login *Session, authFile string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	on := "1"
	authFile = filepath.Join(t.TempDir(), "credentials")
	s, err = m.Spawn(SpawnSpec{Argv: []string{self}, Cwd: t.TempDir(), ACP: true, AuthMethod: "fake-login",
		Env: map[string]*string{"AGENTD_TEST_ACP_AGENT": &on, "AGENTD_TEST_ACP_AUTH_FILE": &authFile}})
	if err != nil {
		t.Fatalf("spawn the fake ACP agent: %v", err)
	}
	info := s.Info()
	if info.Login == "" {
		t.Fatalf("the agent asked for a login and the session runs none: %+v", info)
	}
	if info.State.Name != Error || info.State.Reason != "acp.login" || info.Pid != 0 {
		t.Fatalf("while its login runs the ACP session is %+v, pid %d; want error (acp.login) and no agent", info.State, info.Pid)
	}
	login, err = m.Get(info.Login)
	if err != nil {
		t.Fatalf("the login session %s is not listed: %v", info.Login, err)
	}
	if ptyOf(login) == nil {
		t.Fatal("the login does not run in a terminal")
	}
	awaitScreen(t, login, "Paste the code:")
	return s, login, authFile
}

// awaitExited waits, as a guard, for a session's end.
func awaitExited(t *testing.T, s *Session, what string) {
	t.Helper()
	select {
	case <-s.Exited():
	case <-time.After(20 * time.Second):
		t.Fatalf("%s (session %s) did not end within 20 s; it is %+v", what, s.ID, s.Info().State)
	}
}

// The login runs as a PTY session of its own while the ACP session waits
// in error (acp.login) and refuses prompts; once it exits 0 the agent
// starts, its session opens, and it takes prompts.
func TestACPLoginThenTheAgentStarts(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules}, ev)
	defer m.Shutdown()
	s, login, authFile := spawnFakeACPLogin(t, m)
	if err := s.Prompt("make x"); !errors.Is(err, ErrLoggingIn) {
		t.Fatalf("a prompt while the login runs: %v, want ErrLoggingIn", err)
	}
	if err := login.Input("ok\r"); err != nil {
		t.Fatal(err)
	}
	awaitExited(t, login, "the login")
	if ex := login.Info().Exit; ex == nil || ex.Code != 0 {
		t.Fatalf("the login ended %+v, want exit 0", ex)
	}
	if _, err := os.Stat(authFile); err != nil {
		t.Fatalf("the login did not log in: %v", err)
	}
	awaitPublished(t, ev, s.ID, Idle)
	info := s.Info()
	if info.Pid <= 0 || info.AgentInfo == nil || info.AgentInfo.Name != "fake-acp" || info.Login != login.ID {
		t.Fatalf("after the login: pid %d agent %+v login %q; want the agent running and the login named", info.Pid, info.AgentInfo, info.Login)
	}
	if err := s.Send("make x", true); err != nil {
		t.Fatalf("send after the login: %v", err)
	}
	if st := awaitPublished(t, ev, s.ID, Blocked); st.Prompt == nil || st.Prompt.Question != "touch x" {
		t.Fatalf("the agent's permission: %+v", st)
	}
}

// A login that exits 1 ends the ACP session exited (acp.login_failed),
// saying how the login ended; the agent never ran.
func TestACPLoginFails(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules}, ev)
	defer m.Shutdown()
	s, login, authFile := spawnFakeACPLogin(t, m)
	if err := login.Input("wrong\r"); err != nil {
		t.Fatal(err)
	}
	awaitExited(t, s, "the ACP session after its login failed")
	st := ev.last(s.ID)
	if st.Name != Exited || st.Reason != "acp.login_failed" || st.Message != "the login exited 1" {
		t.Fatalf("after the failed login: %+v, want exited (acp.login_failed), the login exited 1", st)
	}
	if _, err := os.Stat(authFile); err == nil {
		t.Fatal("a wrong code logged in")
	}
	if err := s.Prompt("make x"); !errors.Is(err, ErrExited) {
		t.Fatalf("a prompt after the end: %v, want ErrExited", err)
	}
	if s.Info().Pid != 0 {
		t.Fatalf("the agent has pid %d though it never started", s.Info().Pid)
	}
}

// Stopping the ACP session while its login runs ends both.
func TestACPStopDuringLogin(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules}, ev)
	defer m.Shutdown()
	s, login, _ := spawnFakeACPLogin(t, m)
	if err := s.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	awaitExited(t, s, "the ACP session stopped during its login")
	if st := ev.last(s.ID); st.Name != Exited || st.Reason != "acp.login_failed" || st.Message != loginStopped {
		t.Fatalf("the stopped session: %+v, want exited (acp.login_failed), %q", st, loginStopped)
	}
	awaitExited(t, login, "the login of a stopped ACP session")
	if ex := login.Info().Exit; ex == nil || ex.Signal == "" {
		t.Fatalf("the login ended %+v, want ended by a signal", ex)
	}
	if s.Info().Pid != 0 {
		t.Fatal("the agent started after its session was stopped")
	}
}

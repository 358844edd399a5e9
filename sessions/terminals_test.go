package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/acp"
	"github.com/agentd/agentd/detect"
)

// terminalHost is what an ACP session's agent gets for terminal/*: the
// terminals of a parent session started with PARENT_VAR set.
func terminalHost(t *testing.T) (*Manager, *ptyTerminals, string) {
	t.Helper()
	rules, _ := detect.Load(nil, "")
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules}, ev)
	t.Cleanup(m.Shutdown)
	v := "from-parent"
	parent, err := m.Spawn(SpawnSpec{Argv: []string{"sleep", "60"}, Cwd: t.TempDir(), Env: map[string]*string{"PARENT_VAR": &v}})
	if err != nil {
		t.Fatal(err)
	}
	return m, newPTYTerminals(m, parent), parent.Cwd
}

// waitExit waits for terminal id's command to end, as terminal/wait_for_exit.
func waitExit(t *testing.T, p *ptyTerminals, id string) acp.TerminalExit {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ex, err := p.WaitForExit(ctx, id)
	if err != nil {
		t.Fatalf("terminal %s: waited 20 s for its exit: %v", id, err)
	}
	return ex
}

// A terminal runs its command as a PTY session of its own, listed like any
// other: a whole command line through a shell, with the parent's
// environment and the agent's additions; its output is kept as plain text
// and its exit code is told by wait_for_exit and output alike.
func TestTerminalRunsAndTellsItsExit(t *testing.T) {
	m, p, cwd := terminalHost(t)
	id, err := p.Create(context.Background(), acp.TerminalRequest{
		Command: `printf '\033[1mbold\033[0m %s %s\n' "$PARENT_VAR" "$AGENT_VAR"; exit 3`,
		Env:     []string{"AGENT_VAR=from-agent"}, Cwd: cwd,
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Get(id)
	if err != nil {
		t.Fatalf("the terminal is not a listed session: %v", err)
	}
	if !strings.HasPrefix(s.Name, "terminal: printf") {
		t.Errorf("the terminal's session is named %q, want terminal: and its command", s.Name)
	}
	ex := waitExit(t, p, id)
	if ex.ExitCode == nil || *ex.ExitCode != 3 || ex.Signal != "" {
		t.Fatalf("exit %+v, want code 3", ex)
	}
	out, err := p.Output(id)
	if err != nil {
		t.Fatal(err)
	}
	if out.Output != "bold from-parent from-agent\n" || out.Truncated {
		t.Fatalf("output %q (truncated %v), want the plain text line with both variables", out.Output, out.Truncated)
	}
	if out.Exit == nil || out.Exit.ExitCode == nil || *out.Exit.ExitCode != 3 {
		t.Fatalf("output's exit %+v, want code 3", out.Exit)
	}

	// A command with its arguments runs as it is, through no shell.
	id, err = p.Create(context.Background(), acp.TerminalRequest{Command: "echo", Args: []string{"$PARENT_VAR", "a  b"}, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	waitExit(t, p, id)
	if out, _ := p.Output(id); out.Output != "$PARENT_VAR a  b\n" {
		t.Fatalf("output of echo with args %q, want its arguments as given", out.Output)
	}
}

// Output beyond the agent's limit keeps the newest bytes, says it was
// truncated, and never cuts a character in two.
func TestTerminalOutputLimit(t *testing.T) {
	_, p, cwd := terminalHost(t)
	// 2000 lines of "é" and a number, then the last line.
	id, err := p.Create(context.Background(), acp.TerminalRequest{
		Command: `i=0; while [ $i -lt 2000 ]; do i=$((i+1)); printf 'é%d\n' $i; done; printf 'the end\n'`,
		Cwd:     cwd, OutputByteLimit: 101,
	})
	if err != nil {
		t.Fatal(err)
	}
	waitExit(t, p, id)
	out, err := p.Output(id)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Truncated || len(out.Output) > 101 || len(out.Output) < 90 {
		t.Fatalf("output of %d bytes, truncated %v: want at most the limit of 101 and truncated", len(out.Output), out.Truncated)
	}
	if !utf8.ValidString(out.Output) || !strings.HasSuffix(out.Output, "é2000\nthe end\n") {
		t.Fatalf("output %q: want valid UTF-8 ending with the last lines", out.Output)
	}

	// Under the limit nothing is cut.
	id, err = p.Create(context.Background(), acp.TerminalRequest{Command: `printf 'short\n'`, Cwd: cwd, OutputByteLimit: 101})
	if err != nil {
		t.Fatal(err)
	}
	waitExit(t, p, id)
	if out, _ := p.Output(id); out.Truncated || out.Output != "short\n" {
		t.Fatalf("short output %q truncated %v, want it whole", out.Output, out.Truncated)
	}
}

// Kill ends a command that runs (wait_for_exit tells the signal), a wait
// gives up with its context, and release ends the command and forgets the
// terminal while its session stays listed as exited.
func TestTerminalKillWaitRelease(t *testing.T) {
	m, p, cwd := terminalHost(t)
	id, err := p.Create(context.Background(), acp.TerminalRequest{Command: "sleep", Args: []string{"60"}, Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = p.WaitForExit(ctx, id)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait on a running command with a context that ends: %v, want the context's error", err)
	}
	if out, _ := p.Output(id); out.Exit != nil {
		t.Fatalf("a running command's output tells an exit: %+v", out.Exit)
	}
	if err := p.Kill(id); err != nil {
		t.Fatal(err)
	}
	if ex := waitExit(t, p, id); ex.Signal != "SIGKILL" || ex.ExitCode != nil {
		t.Fatalf("exit after kill %+v, want SIGKILL", ex)
	}
	if err := p.Kill(id); err != nil {
		t.Fatalf("kill of an ended command: %v, want none", err)
	}

	id2, err := p.Create(context.Background(), acp.TerminalRequest{Command: "sleep 60", Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := m.Get(id2)
	if err := p.Release(id2); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s2.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("the released terminal's command still ran 20 s after release")
	}
	for name, err := range map[string]error{
		"output": func() error { _, err := p.Output(id2); return err }(),
		"wait":   func() error { _, err := p.WaitForExit(context.Background(), id2); return err }(),
		"kill":   p.Kill(id2),
		"unknown": func() error {
			_, err := p.Output("s999")
			return err
		}(),
	} {
		if !errors.Is(err, acp.ErrUnknownTerminal) {
			t.Errorf("%s of a released terminal: %v, want ErrUnknownTerminal", name, err)
		}
	}
	if _, err := m.Get(id2); err != nil {
		t.Fatalf("the released terminal's session is no longer listed: %v", err)
	}
	if st := s2.Info().State; st.Name != Exited {
		t.Fatalf("the released terminal's session: %+v, want exited", st)
	}
}

// A command that cannot start is refused at create.
func TestTerminalCreateRefused(t *testing.T) {
	_, p, cwd := terminalHost(t)
	if _, err := p.Create(context.Background(), acp.TerminalRequest{Command: "no-such-program-agentd", Args: []string{"x"}, Cwd: cwd}); err == nil {
		t.Fatal("a program that does not exist was created")
	}
	if _, err := p.Create(context.Background(), acp.TerminalRequest{Command: "true", Args: []string{"x"}, Cwd: cwd + "/missing"}); err == nil {
		t.Fatal("a terminal in a folder that does not exist was created")
	}
}

// updEvents keeps the states and the ACP updates sessions report.
type updEvents struct {
	*recEvents
	umu     sync.Mutex
	updates []string
}

func (e *updEvents) Update(_ string, u json.RawMessage) {
	e.umu.Lock()
	defer e.umu.Unlock()
	e.updates = append(e.updates, string(u))
}

// An ACP agent's terminal/* requests reach agentd's terminals end to end:
// the fake agent runs a command with a variable of its own, waits for it,
// reads its output and tells it; the command ran as a PTY session of
// agentd's, listed and exited with its code.
func TestACPAgentRunsATerminal(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	ev := &updEvents{recEvents: &recEvents{states: map[string][]State{}}}
	m := NewManager(Options{Rules: rules}, ev)
	defer m.Shutdown()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	on, command := "1", `printf '%s\n' "$FROM_AGENT"; exit 4`
	s, err := m.Spawn(SpawnSpec{Argv: []string{self}, Cwd: t.TempDir(), ACP: true,
		Env: map[string]*string{"AGENTD_TEST_ACP_AGENT": &on, "AGENTD_TEST_ACP_TERMINAL": &command}})
	if err != nil {
		t.Fatal(err)
	}
	awaitPublished(t, ev.recEvents, s.ID, Idle)
	if err := s.Send("run it", true); err != nil {
		t.Fatal(err)
	}
	if st := awaitPublished(t, ev.recEvents, s.ID, Done); st.Outcome != "completed" {
		t.Fatalf("the turn ended %+v, want done, completed", st)
	}
	ev.umu.Lock()
	told := strings.Join(ev.updates, "\n")
	ev.umu.Unlock()
	if !strings.Contains(told, `exit 4: yes\n`) {
		t.Fatalf("the agent told %s; want the terminal's exit 4 and its output yes", told)
	}
	var term *Session
	for _, x := range m.List() {
		if x != s {
			term = x
		}
	}
	if term == nil || ptyOf(term) == nil || !strings.HasPrefix(term.Name, "terminal: printf") {
		t.Fatalf("the terminal is not listed as a PTY session of its own: %+v", term)
	}
	if ex := term.Info().Exit; ex == nil || ex.Code != 4 {
		t.Fatalf("the terminal's session ended %+v, want exit 4", ex)
	}
}

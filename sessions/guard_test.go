package sessions

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// Guarded writes on real PTY sessions (bash scripts under the generic
// rules): what Send and Answer refuse, and that what they do type is typed
// once.

func guardManager(t *testing.T) *Manager {
	t.Helper()
	rules, _ := detect.Load(nil, "")
	m := NewManager(Options{Rules: rules}, &recEvents{states: map[string][]State{}})
	t.Cleanup(m.Shutdown)
	return m
}

func spawnScript(t *testing.T, m *Manager, script string) *Session {
	t.Helper()
	s, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "--noprofile", "-c", script}, Cwd: t.TempDir(), Cols: 80, Rows: 24})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// awaitScreen waits until the session's screen shows want.
func awaitScreen(t *testing.T, s *Session, want string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		text := s.pty.term.Snapshot().Text()
		if strings.Contains(text, want) {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen did not show %q within 20 s; it shows:\n%s", want, text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitState classifies until the session's state is name.
func awaitState(t *testing.T, s *Session, name string) State {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := s.update()
		if st.Name == name {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session did not turn %s within 20 s: %+v\n%s", name, st, s.pty.term.Snapshot().Text())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const yesNo = `read -r -p "Go on? [y/n] " a; echo "got [$a]"; read -r -p "Again? [y/n] " b; echo "then [$b]"; sleep 30`

func TestSendIsRefusedWhileAPromptWaits(t *testing.T) {
	s := spawnScript(t, guardManager(t), yesNo)
	awaitState(t, s, Blocked)
	err := s.Send("hello", true)
	var be *BlockedError
	if !errors.As(err, &be) || be.Prompt == nil || !strings.Contains(be.Prompt.Question, "Go on?") {
		t.Fatalf("Send while blocked: %v (prompt %+v), want a BlockedError naming the prompt", err, be)
	}
	if text := s.pty.term.Snapshot().Text(); strings.Contains(text, "hello") || strings.Contains(text, "got [") {
		t.Fatalf("Send typed while blocked:\n%s", text)
	}
}

func TestAnswerTypesOnceAndRefusesWhatIsNotOnScreen(t *testing.T) {
	s := spawnScript(t, guardManager(t), yesNo)
	st := awaitState(t, s, Blocked)
	first := st.Prompt
	if _, err := s.Answer("not-this-prompt", first.Options[0].ID, ""); !errors.As(err, new(*StaleError)) {
		t.Errorf("an answer to another promptId: %v, want a StaleError", err)
	}
	if _, err := s.Answer(first.ID, "no-such-option", ""); !errors.Is(err, ErrUnknownOption) {
		t.Errorf("an unknown option: %v, want ErrUnknownOption", err)
	}
	if text := s.pty.term.Snapshot().Text(); strings.Contains(text, "got [") {
		t.Fatalf("a refused answer typed something:\n%s", text)
	}
	yes, ok := first.Option("y")
	if !ok {
		yes = first.Options[0]
	}
	if _, err := s.Answer(first.ID, yes.ID, ""); err != nil {
		t.Fatalf("answer %s: %v", yes.ID, err)
	}
	awaitScreen(t, s, "Again?")
	// The first prompt has left: the same answer again is stale, and types
	// nothing into the second prompt.
	if _, err := s.Answer(first.ID, yes.ID, ""); !errors.As(err, new(*StaleError)) {
		t.Errorf("the answer again: %v, want a StaleError", err)
	}
	text := s.pty.term.Snapshot().Text()
	if strings.Count(text, "got [") != 1 || strings.Contains(text, "then [") {
		t.Fatalf("the answer was not typed exactly once:\n%s", text)
	}
}

func TestSendTypesTheTextAndSubmitsIt(t *testing.T) {
	s := spawnScript(t, guardManager(t), `read -r line; echo "line=[$line]"; sleep 30`)
	if err := s.Send("hello world", true); err != nil {
		t.Fatalf("Send: %v", err)
	}
	awaitScreen(t, s, "line=[hello world]")
}

func TestGuardedWritesToAnEndedSession(t *testing.T) {
	s := spawnScript(t, guardManager(t), `exit 0`)
	select {
	case <-s.exitDone:
	case <-time.After(20 * time.Second):
		t.Fatal("the session did not end within 20 s")
	}
	if err := s.Send("x", true); !errors.Is(err, ErrExited) {
		t.Errorf("Send to an ended session: %v, want ErrExited", err)
	}
	if _, err := s.Answer("p", "1", ""); !errors.Is(err, ErrExited) {
		t.Errorf("Answer to an ended session: %v, want ErrExited", err)
	}
}

package sessions

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/term"

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
		text := ptyOf(s).term.Snapshot().Text()
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
			t.Fatalf("the session did not turn %s within 20 s: %+v\n%s", name, st, ptyOf(s).term.Snapshot().Text())
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
	if text := ptyOf(s).term.Snapshot().Text(); strings.Contains(text, "hello") || strings.Contains(text, "got [") {
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
	if text := ptyOf(s).term.Snapshot().Text(); strings.Contains(text, "got [") {
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
	text := ptyOf(s).term.Snapshot().Text()
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

// fakeMenuAgent is a terminal agent with an arrow-key menu, run by
// TestMain: it reads keys raw, drops a read that holds more than one key
// (as Ink-based agents do), and redraws the selection only a while after
// each arrow, as a busy machine does. It prints the option Enter chose.
func fakeMenuAgent() int {
	old, err := term.MakeRaw(0)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer term.Restore(0, old)
	options := []string{"Yes", "Yes, always", "No"}
	sel := 0
	// Each frame goes out in one write, as a TUI draws: line by line, a
	// busy machine lets the question show alone, a prompt with no options.
	draw := func() {
		var frame strings.Builder
		frame.WriteString("\x1b[H\x1b[2JAllow this?\r\n")
		for i, o := range options {
			mark := " "
			if i == sel {
				mark = "›"
			}
			fmt.Fprintf(&frame, "%s %s\r\n", mark, o)
		}
		os.Stdout.WriteString(frame.String())
	}
	draw()
	buf := make([]byte, 64)
	for {
		n, err := os.Stdin.Read(buf)
		if err != nil {
			return 1
		}
		switch string(buf[:n]) {
		case "\x1b[B":
			sel = min(sel+1, len(options)-1)
		case "\x1b[A":
			sel = max(sel-1, 0)
		case "\r":
			fmt.Printf("\x1b[H\x1b[2Jchose %s\r\n", options[sel])
			time.Sleep(30 * time.Second)
			return 0
		default:
			continue // several keys in one read: dropped
		}
		time.Sleep(300 * time.Millisecond)
		draw()
	}
}

// spawnMenuAgent runs fakeMenuAgent in a session of a manager whose only
// extra manifest is agent's, src.
func spawnMenuAgent(t *testing.T, agent, src string) *Session {
	t.Helper()
	rules, warnings := detect.Load(map[string][]byte{agent + ".toml": []byte(src)}, "test")
	if len(warnings) > 0 {
		t.Fatal(warnings)
	}
	m := NewManager(Options{Rules: rules}, &recEvents{states: map[string][]State{}})
	t.Cleanup(m.Shutdown)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	on := "1"
	s, err := m.Spawn(SpawnSpec{Argv: []string{self}, Env: map[string]*string{"AGENTD_TEST_MENU_AGENT": &on}, Cwd: t.TempDir(), Cols: 80, Rows: 24, Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// menuRules reads fakeMenuAgent's menu; it takes keys one at a time.
const menuRules = `name = "menu"
[identify]
argv = ["AGENTD_TEST_MENU_AGENT"]
[[rule]]
id = "menu"
state = "blocked"
match = ['^Allow this\?$']
prompt = "menu"
[prompt.menu]
kind = "permission"
question = '^(Allow this\?)$'
option = '^(?:(?P<selected>›)| ) (?P<label>\S.*?)\s*$'
keys = "<down*{down}><up*{up}><enter>"
key_gap = "40ms"
`

// An agent that takes keys one at a time and draws its selection late
// gets each arrow only once the last one shows, and Enter only once the
// chosen option is selected: typed 40 ms apart, the keys would pile up in
// one read while it draws, and it would drop them.
func TestAnswerStepsASelectionItShows(t *testing.T) {
	s := spawnMenuAgent(t, "menu", menuRules)
	st := awaitState(t, s, Blocked)
	if !st.Prompt.Stepped {
		t.Fatalf("prompt %+v is not stepped", st.Prompt)
	}
	no, ok := st.Prompt.Option("3")
	if !ok || no.Label != "No" {
		t.Fatalf("options %+v have no 3 No", st.Prompt.Options)
	}
	after, err := s.Answer(st.Prompt.ID, no.ID, "")
	if err != nil {
		t.Fatalf("answer No: %v", err)
	}
	if after.Name == Blocked {
		t.Fatalf("still blocked after answering No: %+v\n%s", after, ptyOf(s).term.Snapshot().Text())
	}
	awaitScreen(t, s, "chose No")
}

// A hang-up (session/kill's default) ends the session's whole process
// group: a leader that leaves at once while a child of its group ignores
// SIGHUP no longer leaves the child running after the session exited
// (Qwen's node under its launcher did, and wrote into its HOME after).
func TestKillEndsWhatIsLeftOfTheGroup(t *testing.T) {
	m := guardManager(t)
	s := spawnScript(t, m, `(trap '' HUP; exec sleep 300) & echo "child=$!"; trap 'exit 0' HUP; wait`)
	text := awaitScreen(t, s, "child=")
	_, after, _ := strings.Cut(text, "child=")
	child, err := strconv.Atoi(strings.Fields(after)[0])
	if err != nil {
		t.Fatalf("no child pid on screen:\n%s", text)
	}
	if err := s.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	<-s.Exited()
	deadline := time.Now().Add(20 * time.Second)
	for syscall.Kill(child, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("the group's child %d still ran 20 s after the session exited", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A resize is not the agent's word. This program (bash's read, as many
// tools ask) never draws again on SIGWINCH, so after the terminal narrows
// the screen holds its question cut at 30 columns, without its [y/n]: read
// as it is, that is no prompt, and the session would be told working or
// idle, then blocked on another promptId once the program writes again.
// The prompt it drew stands until it writes: the state, its promptId and
// an answer with that promptId.
func TestResizeKeepsThePromptUntilTheAgentDraws(t *testing.T) {
	m := guardManager(t)
	events := m.events.(*recEvents)
	s := spawnScript(t, m, `read -r -p "Overwrite the file notes/2026/december/plans-for-the-week.md? [y/n] " a; echo "got [$a]"; sleep 30`)
	st := awaitState(t, s, Blocked)
	events.mu.Lock()
	told := len(events.states[s.ID])
	events.mu.Unlock()
	if err := s.Resize(30, 24); err != nil {
		t.Fatal(err)
	}
	if text := ptyOf(s).term.Snapshot().Text(); strings.Contains(text, "[y/n]") {
		t.Fatalf("the screen at 30 columns still shows the whole question, so this test proves nothing:\n%s", text)
	}
	again := s.update()
	events.mu.Lock()
	after := append([]State(nil), events.states[s.ID][told:]...)
	events.mu.Unlock()
	if again.Name != Blocked || again.Prompt == nil || again.Prompt.ID != st.Prompt.ID || len(after) != 0 {
		t.Fatalf("after a resize the agent did not draw for: %s on %+v, told %+v; want blocked on %s as before, nothing told", again.Name, again.Prompt, after, st.Prompt.ID)
	}
	yes := st.Prompt.Options[0]
	if _, err := s.Answer(st.Prompt.ID, yes.ID, ""); err != nil {
		t.Fatalf("the answer with the promptId from before the resize: %v", err)
	}
	awaitScreen(t, s, "got ["+yes.Label+"]")
}

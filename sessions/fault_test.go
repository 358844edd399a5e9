package sessions

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// recEvents keeps the states sessions report.
type recEvents struct {
	mu     sync.Mutex
	states map[string][]State
}

func (e *recEvents) State(in Info, _ State) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.states[in.ID] = append(e.states[in.ID], in.State)
}
func (*recEvents) Output(string, string)          {}
func (*recEvents) Update(string, json.RawMessage) {}
func (*recEvents) Exited(string, ExitStatus)      {}

func (e *recEvents) last(id string) State {
	e.mu.Lock()
	defer e.mu.Unlock()
	if st := e.states[id]; len(st) > 0 {
		return st[len(st)-1]
	}
	return State{}
}

// A fault inside one session's work (injected here with a test hook, as a
// bug in agentd would be) marks that session error; the others go on.
func TestPanicInOneSessionLeavesOthers(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules}, ev)
	defer m.Shutdown()
	script := `read -r -p "Go on? [y/n] " a; echo "got $a"; sleep 30`
	bad, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "-c", script}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	hook := func(s *Session) {
		if s == bad {
			panic("injected fault")
		}
	}
	testHookUpdate.Store(&hook)
	defer testHookUpdate.Store(nil)
	good, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "-c", script}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && (ev.last(bad.ID).Name != Error || ev.last(good.ID).Name != Blocked) {
		time.Sleep(20 * time.Millisecond)
	}
	if st := ev.last(bad.ID); st.Name != Error || st.Reason != "agentd.internal_error" {
		t.Fatalf("faulty session: %+v, want error", st)
	}
	if st := ev.last(good.ID); st.Name != Blocked {
		t.Fatalf("the other session: %+v, want blocked on its prompt", st)
	}
	// The other session is still served: answering moves it on.
	st := good.update()
	if _, err := good.Answer(st.Prompt.ID, "1", ""); err != nil {
		t.Fatalf("answer the healthy session: %v", err)
	}
}

// One goroutine reads every PTY (the pump), so nothing it does may wait on
// one agent. This agent asks the terminal what it is (CSI c) again and
// again and never reads the answers: once its input is full, writing them
// would block for ever. Another session's prompt must still be read and
// classified.
func TestAgentNotReadingRepliesStallsNoOther(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules}, ev)
	defer m.Shutdown()
	stuck, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "-c", `stty raw -echo; while :; do printf '\033[c'; done`}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until its input is full: the answers it does not read queue up.
	queued := func() int {
		stuck.replyMu.Lock()
		defer stuck.replyMu.Unlock()
		return len(stuck.replies)
	}
	for deadline := time.Now().Add(20 * time.Second); queued() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no answer queued after 20 s: the agent's input never filled, so this run would not test what it means to")
		}
	}
	good, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "-c", `read -r -p "Go on? [y/n] " a; echo "got $a"; sleep 30`}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && ev.last(good.ID).Name != Blocked {
		time.Sleep(20 * time.Millisecond)
	}
	if st := ev.last(good.ID); st.Name != Blocked {
		t.Fatalf("the other session: %+v after 20 s, want blocked on its prompt", st)
	}
}

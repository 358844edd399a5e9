package sessions

import (
	"encoding/json"
	"sync"
	"sync/atomic"
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

// A fault inside one session's work (injected with a test hook, as a bug
// in agentd or bad outside data would cause) marks that session error and
// nothing else: at the start of an update, and inside each span that holds
// the session's lock while it reads the process table, the agent's log or
// a report, or decides. The other session goes on to its prompt and is
// answered, and listing every session (what session/list does) answers.
func TestPanicInOneSessionLeavesOthers(t *testing.T) {
	for _, at := range faultPoints {
		if at == "acp" {
			continue // an ACP session's span: TestPanicInOneACPSessionLeavesOthers
		}
		t.Run(at, func(t *testing.T) { panicAt(t, at) })
	}
}

func panicAt(t *testing.T, at string) {
	rules, _ := detect.Load(nil, "")
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules}, ev)
	defer m.Shutdown()
	script := `read -r -p "Go on? [y/n] " a; echo "got $a"; sleep 30`
	var bad atomic.Pointer[Session]
	hook := func(s *Session, point string) {
		if point == at && s == bad.Load() {
			panic("injected fault at " + at)
		}
	}
	testHookFault.Store(&hook)
	defer testHookFault.Store(nil)
	// A shell session, so that the process probe runs for it.
	b, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "-c", script}, Cwd: t.TempDir(), Agent: "shell"})
	if err != nil {
		t.Fatal(err)
	}
	bad.Store(b)
	b.poke() // its first classification may have run before it was marked
	good, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "-c", script}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && (ev.last(b.ID).Name != Error || ev.last(good.ID).Name != Blocked) {
		time.Sleep(20 * time.Millisecond)
	}
	if st := ev.last(b.ID); st.Name != Error || st.Reason != "agentd.internal_error" {
		t.Fatalf("faulty session after 20 s: %+v, want error (agentd.internal_error)", st)
	}
	if st := ev.last(good.ID); st.Name != Blocked {
		t.Fatalf("the other session after 20 s: %+v, want blocked on its prompt", st)
	}
	mustList(t, m, 2)
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
		stuck.mu.Lock()
		defer stuck.mu.Unlock()
		return len(ptyOf(stuck).replies)
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

// mustList lists every session with its info, as session/list does, and
// fails if that does not answer (a lock held for ever) or finds other
// than want.
func mustList(t *testing.T, m *Manager, want int) {
	t.Helper()
	listed := make(chan int, 1)
	go func() {
		n := 0
		for _, s := range m.List() {
			_ = s.Info()
			n++
		}
		listed <- n
	}()
	select {
	case n := <-listed:
		if n != want {
			t.Fatalf("listed %d sessions, want %d", n, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("listing the sessions did not answer within 20 s: a lock is held for ever")
	}
}

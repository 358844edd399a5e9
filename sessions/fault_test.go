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

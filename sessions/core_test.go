package sessions

import (
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// fakeDriver is a FAKE driver: the session core's own behaviour (looks,
// guards, one finish) is the point of these tests, not a terminal's or an
// agent's. It decides on the verdict the test sets and records what the
// core asked of it.
type fakeDriver struct {
	mu       sync.Mutex
	verdict  detect.Verdict
	sent     []string
	answered []string
	releases int
	hungUp   int
}

func (d *fakeDriver) facts() (facts, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return facts{screen: d.verdict}, true
}
func (d *fakeDriver) changed() {}
func (d *fakeDriver) send(text string, _ bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sent = append(d.sent, text)
	return nil
}
func (d *fakeDriver) answer(st State, promptID, optionID, _ string) (State, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.answered = append(d.answered, promptID+"/"+optionID)
	return st, nil
}
func (d *fakeDriver) start([]string, []string, SpawnSpec) error { return nil }
func (d *fakeDriver) begin()                                    {}
func (d *fakeDriver) signal(syscall.Signal) error               { return nil }
func (d *fakeDriver) describe(*Info)                            {}
func (d *fakeDriver) hangUp() bool                              { d.hungUp++; return true }
func (d *fakeDriver) release()                                  { d.releases++ }
func (d *fakeDriver) set(v detect.Verdict)                      { d.mu.Lock(); d.verdict = v; d.mu.Unlock() }

func fakeSession(t *testing.T) (*Session, *fakeDriver, *recEvents) {
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{}, ev)
	d := &fakeDriver{verdict: idleV}
	s := &Session{ID: "fake", mgr: m, drv: d, manifest: knowsIdleRules, base: knowsIdleRules,
		machine: newMachine(startingState("x", time.Now())), exitDone: make(chan struct{})}
	s.lastPublished = s.machine.state
	return s, d, ev
}

// The guards are the core's, whatever the driver: send is refused while
// the decision says blocked and reaches the driver otherwise; an answer
// reaches it with the state just decided.
func TestCoreGuardsBeforeTheDriver(t *testing.T) {
	s, d, _ := fakeSession(t)
	d.set(blockedV)
	var blocked *BlockedError
	if err := s.Send("go", true); !errors.As(err, &blocked) || blocked.Prompt.ID != shownP1 {
		t.Fatalf("send while blocked: %v, want BlockedError on p1", err)
	}
	if len(d.sent) != 0 {
		t.Fatalf("the driver was given %q while blocked", d.sent)
	}
	if _, err := s.Answer(shownP1, "1", ""); err != nil || len(d.answered) != 1 {
		t.Fatalf("answer: %v, driver saw %q", err, d.answered)
	}
	d.set(readyV)
	if err := s.Send("go", true); err != nil || len(d.sent) != 1 {
		t.Fatalf("send at the composer: %v, driver saw %q", err, d.sent)
	}
}

// finish ends a session once, whoever calls it: one exited state, one
// Exited event, the driver let go of once, and nothing after it is
// allowed.
func TestCoreFinishesOnce(t *testing.T) {
	s, d, ev := fakeSession(t)
	s.update()
	for i := 0; i < 2; i++ {
		s.updateMu.Lock()
		s.finish(&ExitStatus{Code: 3}, State{})
		s.updateMu.Unlock()
	}
	select {
	case <-s.Exited():
	default:
		t.Fatal("finish did not close Exited")
	}
	if d.releases != 1 {
		t.Fatalf("the driver was released %d times, want once", d.releases)
	}
	n := 0
	for _, st := range ev.states[s.ID] {
		if st.Name == Exited {
			n++
		}
	}
	if n != 1 || ev.last(s.ID).Reason != "process.exit" {
		t.Fatalf("published %d exited states, last %+v; want one, process.exit", n, ev.last(s.ID))
	}
	d.set(workingV)
	if st := s.update(); st.Name != Exited {
		t.Fatalf("a look after the end: %+v, want exited kept", st)
	}
	if err := s.Send("go", true); !errors.Is(err, ErrExited) {
		t.Fatalf("send after the end: %v, want ErrExited", err)
	}
	s.stop(time.Second)
	if d.hungUp != 0 {
		t.Fatal("stop hung up an ended session")
	}
}

package sessions

import (
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// awaitPublished waits, as a guard and not a clock, until id's last published
// state is name.
func awaitPublished(t *testing.T, ev *recEvents, id, name string) State {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if st := ev.last(id); st.Name == name {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("session %s: waited 20 s for %s, last published %+v", id, name, ev.last(id))
	return State{}
}

// An ACP session goes through the same core as a terminal one: send is a
// prompt turn, the pending permission is blocked, the answer is the
// permission's reply, the turn's end is done until seen, and the end of
// the agent goes through the one finish. The terminal's methods are
// refused with ErrNoScreen. (The agent is the fake of acpagent_test.go.)
func TestACPSessionThroughTheCore(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules}, ev)
	defer m.Shutdown()
	s := spawnFakeACP(t, m)
	awaitPublished(t, ev, s.ID, Idle)
	if err := s.Send("make x", true); err != nil {
		t.Fatalf("send: %v", err)
	}
	st := awaitPublished(t, ev, s.ID, Blocked)
	if st.Source != SourceACP || st.Prompt == nil || len(st.Prompt.Options) != 2 || st.Prompt.Question != "touch x" {
		t.Fatalf("blocked: %+v prompt %+v, want the fake's permission with Allow and Reject", st, st.Prompt)
	}
	var blocked *BlockedError
	if err := s.Send("more", true); !errors.As(err, &blocked) {
		t.Fatalf("send while blocked: %v, want BlockedError", err)
	}
	for name, err := range map[string]error{
		"input":  s.Input("y"),
		"resize": s.Resize(80, 24),
		"watch":  s.WatchOutput(func(string) bool { return true }),
	} {
		if !errors.Is(err, ErrNoScreen) {
			t.Errorf("%s on an ACP session: %v, want ErrNoScreen", name, err)
		}
	}
	if _, _, err := s.Screen(); !errors.Is(err, ErrNoScreen) {
		t.Errorf("screen of an ACP session: %v, want ErrNoScreen", err)
	}
	if _, err := s.Answer(st.Prompt.ID, "allow", ""); err != nil {
		t.Fatalf("answer: %v", err)
	}
	if st := awaitPublished(t, ev, s.ID, Done); st.Outcome != "completed" {
		t.Fatalf("after the answer: %+v, want done, completed", st)
	}
	if st := s.Seen(); st.Name != Idle {
		t.Fatalf("seen: %+v, want idle", st)
	}
	if info := s.Info(); info.AgentInfo == nil || info.AgentInfo.Name != "fake-acp" {
		t.Fatalf("info: %+v, want the agent's own name from initialize", info.AgentInfo)
	}
	if err := s.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("the ACP agent did not end within 20 s of SIGHUP")
	}
	if st := ev.last(s.ID); st.Name != Exited {
		t.Fatalf("after the end: %+v, want exited", st)
	}
	if err := s.Signal(syscall.SIGHUP); !errors.Is(err, ErrExited) {
		t.Fatalf("signal after the end: %v, want ErrExited", err)
	}
}

// A fault inside an ACP session's look (the span that reads the client's
// pending permissions under the session's lock) marks that session error
// and nothing else: another ACP session is asked, answered and done, and
// listing answers.
func TestPanicInOneACPSessionLeavesOthers(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules}, ev)
	defer m.Shutdown()
	var bad atomic.Pointer[Session]
	hook := func(s *Session, point string) {
		if point == "acp" && s == bad.Load() {
			panic("injected fault at acp")
		}
	}
	testHookFault.Store(&hook)
	defer testHookFault.Store(nil)
	b := spawnFakeACP(t, m)
	awaitPublished(t, ev, b.ID, Idle)
	bad.Store(b)
	// The prompt's own look runs contained, as the pump's do.
	b.contain("prompt", func() { _ = b.Send("make x", true) })
	if st := awaitPublished(t, ev, b.ID, Error); st.Reason != "agentd.internal_error" {
		t.Fatalf("the faulty session: %+v, want error (agentd.internal_error)", st)
	}
	good := spawnFakeACP(t, m)
	awaitPublished(t, ev, good.ID, Idle)
	if err := good.Send("make x", true); err != nil {
		t.Fatal(err)
	}
	st := awaitPublished(t, ev, good.ID, Blocked)
	if _, err := good.Answer(st.Prompt.ID, "allow", ""); err != nil {
		t.Fatalf("answer the healthy session: %v", err)
	}
	awaitPublished(t, ev, good.ID, Done)
	mustList(t, m, 2)
}

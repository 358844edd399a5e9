package rpc

import (
	"io"
	"log/slog"
	"testing"

	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// An editor that stops reading while sessions keep changing state: the
// queue holds the latest state per session (and what must stay in order
// with it), not one note per change.
func TestStateQueueStaysBoundedWhileEditorDoesNotRead(t *testing.T) {
	n := newOutbox(slog.New(slog.NewTextHandler(io.Discard, nil)))
	names := []string{sessions.Working, sessions.Blocked, sessions.Idle, sessions.Done}
	for i := range 200000 {
		id := []string{"s1", "s2", "s3"}[i%3]
		n.State(sessions.Info{ID: id, Agent: "demo", State: sessions.State{Name: names[i%len(names)]}}, sessions.State{}, false)
		if i%1000 == 0 {
			n.Exited("s9", sessions.ExitStatus{}) // a note that is never replaced
		}
	}
	n.mu.Lock()
	queued, dead := len(n.queue), n.deadCount
	n.mu.Unlock()
	if queued > 400 {
		t.Fatalf("%d notes queued (%d of them replaced) after 200000 state changes of 3 sessions", queued, dead)
	}
	// What is left is the latest state of each session, plus the exits.
	live := map[string]string{}
	exits := 0
	for _, nt := range n.queue {
		if nt.dead {
			continue
		}
		if sn, ok := nt.params.(*protocol.StateNotification); ok {
			live[sn.SessionID] = sn.State
		} else {
			exits++
		}
	}
	if len(live) != 3 || exits != 200 {
		t.Fatalf("live states %v and %d exits, want 3 sessions and 200 exits", live, exits)
	}
	if live["s1"] != names[199998%4] || live["s2"] != names[199999%4] || live["s3"] != names[199997%4] {
		t.Fatalf("latest states %v", live)
	}
}

package rpc

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// maxQueuedOutput bounds the output bytes waiting for a slow editor; past
// it output is dropped (counted, then healed with a repaint) while state
// notifications keep flowing, latest state per session winning.
const maxQueuedOutput = 4 << 20

// outbox queues notifications for the editor and sends them from its own
// goroutine, so no session ever waits on the editor reading its stdin.
type outbox struct {
	log     *slog.Logger
	repaint func(sessionID string) string

	mu      sync.Mutex
	wake    chan struct{}
	queue   []*note
	pending map[string]*note // queued state note per session
	// deadCount counts queued states replaced by a newer one.
	deadCount int
	outLen    int
	dropped   map[string]int
	// droppedUpdates counts ACP updates left out per session.
	droppedUpdates map[string]int
	closed         bool
	done           chan struct{}
}

type note struct {
	method string
	params any
	size   int
	dead   bool // replaced by a newer state before it was sent
}

func newOutbox(log *slog.Logger) *outbox {
	return &outbox{
		log: log, wake: make(chan struct{}, 1), pending: map[string]*note{},
		dropped: map[string]int{}, droppedUpdates: map[string]int{}, done: make(chan struct{}),
	}
}

// State implements sessions.Events: a newer state replaces one still queued
// for the same session (keeping the previous state the editor last saw).
func (n *outbox) State(info sessions.Info, previous sessions.State, attention bool) {
	st := info.State
	p := &protocol.StateNotification{
		SessionID: info.ID, Agent: info.Agent, State: st.Name, Previous: previous.Name,
		Outcome: st.Outcome, StateSource: st.Source, Reason: st.Reason, Since: stamp(st.Since),
		Attention: attention, Prompt: wirePrompt(st.Prompt), Message: st.Message,
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if old, ok := n.pending[info.ID]; ok {
		// Latest wins, and it goes to the back of the queue: ACP updates
		// queued since must still come before it, as they happened.
		op := old.params.(*protocol.StateNotification)
		p.Previous = op.Previous
		p.Attention = p.Attention || op.Attention
		old.dead = true
		n.deadCount++
	}
	nt := &note{method: protocol.NoteState, params: p}
	n.pending[info.ID] = nt
	n.push(nt)
	n.compactLocked()
}

// compactLocked drops replaced states from the queue once they are most
// of it: an editor that stops reading while a session's state keeps
// changing must not grow the queue by one dead note per change.
func (n *outbox) compactLocked() {
	if n.deadCount < 64 || n.deadCount*2 < len(n.queue) {
		return
	}
	live := n.queue[:0]
	for _, nt := range n.queue {
		if !nt.dead {
			live = append(live, nt)
		}
	}
	clear(n.queue[len(live):])
	n.queue = live
	n.deadCount = 0
}

// Output implements sessions.Events.
func (n *outbox) Output(sessionID, data string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.outLen+len(data) > maxQueuedOutput {
		n.dropped[sessionID] += len(data)
		return
	}
	n.outLen += len(data)
	n.push(&note{method: protocol.NoteOutput, params: &protocol.OutputNotification{SessionID: sessionID, Data: data}, size: len(data)})
}

// Update implements sessions.Events: ACP updates count against the same
// bound as output; past it they are dropped and the count is sent later.
func (n *outbox) Update(sessionID string, update json.RawMessage) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.outLen+len(update) > maxQueuedOutput {
		n.droppedUpdates[sessionID]++
		return
	}
	n.outLen += len(update)
	n.push(&note{method: protocol.NoteUpdate, params: &protocol.UpdateNotification{SessionID: sessionID, Update: update}, size: len(update)})
}

// Exited implements sessions.Events.
func (n *outbox) Exited(sessionID string, st sessions.ExitStatus) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.push(&note{method: protocol.NoteExited, params: &protocol.ExitedNotification{SessionID: sessionID, ExitCode: st.Code, Signal: st.Signal}})
}

func (n *outbox) push(nt *note) {
	if n.closed {
		return
	}
	n.queue = append(n.queue, nt)
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// run sends queued notifications until close.
func (n *outbox) run(ctx context.Context, conn *jsonrpc2.Conn) {
	defer close(n.done)
	for {
		n.mu.Lock()
		if len(n.queue) == 0 {
			n.healDroppedLocked()
		}
		if len(n.queue) == 0 {
			closed := n.closed
			n.mu.Unlock()
			if closed {
				return
			}
			<-n.wake
			continue
		}
		nt := n.queue[0]
		n.queue = n.queue[1:]
		if nt.dead {
			n.deadCount--
			n.mu.Unlock()
			continue
		}
		if nt.method == protocol.NoteState {
			delete(n.pending, nt.params.(*protocol.StateNotification).SessionID)
		}
		n.outLen -= nt.size
		n.mu.Unlock()
		if err := conn.Notify(ctx, nt.method, nt.params); err != nil {
			n.log.Debug("notification not sent", "method", nt.method, "err", err)
		}
	}
}

// healDroppedLocked tells each session's viewer how much output it missed
// and repaints its screen, once the queue has drained.
func (n *outbox) healDroppedLocked() {
	for id, count := range n.droppedUpdates {
		n.queue = append(n.queue, &note{method: protocol.NoteUpdate, params: &protocol.UpdateNotification{SessionID: id, Dropped: count}})
	}
	clear(n.droppedUpdates)
	if len(n.dropped) == 0 {
		return
	}
	dropped := n.dropped
	n.dropped = map[string]int{}
	for id, count := range dropped {
		data := ""
		if n.repaint != nil {
			n.mu.Unlock()
			data = n.repaint(id)
			n.mu.Lock()
		}
		n.outLen += len(data)
		n.queue = append(n.queue, &note{method: protocol.NoteOutput, params: &protocol.OutputNotification{SessionID: id, Data: data, Dropped: count}, size: len(data)})
	}
}

// close stops accepting notifications, sends what is queued and returns
// once the queue is empty (or the editor is gone).
func (n *outbox) close() {
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

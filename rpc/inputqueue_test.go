package rpc

import (
	"testing"
	"time"
)

// Inputs to one session wait for each other in arrival order; past
// maxWaitingInputs they are refused (-32013) instead of piling up, and a
// stuck session holds up no other session's input.
func TestInputQueueOrdersAndBounds(t *testing.T) {
	var q inputQueue
	first, mine, ok := q.enter("s1")
	if !ok || first != nil {
		t.Fatalf("the first input waits for nothing: prev %v ok %v", first, ok)
	}
	held := []chan struct{}{mine}
	for i := 1; i < maxWaitingInputs; i++ {
		prev, m, ok := q.enter("s1")
		if !ok || prev != held[len(held)-1] {
			t.Fatalf("input %d: not queued behind the one before it", i)
		}
		held = append(held, m)
	}
	if _, _, ok := q.enter("s1"); ok {
		t.Fatalf("input %d to a session not reading was queued", maxWaitingInputs+1)
	}
	if prev, m, ok := q.enter("s2"); !ok || prev != nil {
		t.Fatal("another session's input waits behind s1")
	} else {
		q.leave("s2", m)
	}
	q.leave("s1", held[0])
	select {
	case <-held[0]:
	case <-time.After(time.Second):
		t.Fatal("leave did not release the next input")
	}
	if _, m, ok := q.enter("s1"); !ok {
		t.Fatal("a freed place was not given to the next input")
	} else {
		held = append(held, m)
	}
	for _, m := range held[1:] {
		q.leave("s1", m)
	}
	if len(q.waiting) != 0 || len(q.last) != 0 {
		t.Fatalf("the queue keeps %d/%d entries after every input left", len(q.waiting), len(q.last))
	}
}

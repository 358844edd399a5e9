package acp

import (
	"context"
	"sync"
)

// dispatcher calls the Handler from one goroutine, in the order events
// were queued. Queuing never blocks, so the connection's read loop and
// the Client's methods never wait on the Handler, and the Handler may
// call the Client.
type dispatcher struct {
	mu       sync.Mutex
	cond     *sync.Cond
	q        []func()
	closed   bool
	muted    bool
	finished chan struct{} // closed when run has returned
}

func newDispatcher() *dispatcher {
	d := &dispatcher{finished: make(chan struct{})}
	d.cond = sync.NewCond(&d.mu)
	return d
}

func (d *dispatcher) push(f func()) {
	d.mu.Lock()
	if !d.closed && !d.muted {
		d.q = append(d.q, f)
		d.cond.Signal()
	}
	d.mu.Unlock()
}

// close lets run return once the queue is empty.
func (d *dispatcher) close() {
	d.mu.Lock()
	d.closed = true
	d.cond.Signal()
	d.mu.Unlock()
}

// mute drops everything queued and everything after.
func (d *dispatcher) mute() {
	d.mu.Lock()
	d.muted = true
	d.q = nil
	d.mu.Unlock()
}

func (d *dispatcher) run() {
	defer close(d.finished)
	for {
		d.mu.Lock()
		for len(d.q) == 0 && !d.closed {
			d.cond.Wait()
		}
		if len(d.q) == 0 {
			d.mu.Unlock()
			return
		}
		f := d.q[0]
		d.q[0] = nil
		d.q = d.q[1:]
		muted := d.muted
		d.mu.Unlock()
		if !muted {
			f()
		}
	}
}

// barrier returns once everything queued before it has been handled (or
// ctx ends, or the dispatcher is done).
func (d *dispatcher) barrier(ctx context.Context) {
	ch := make(chan struct{})
	d.mu.Lock()
	if d.closed || d.muted {
		d.mu.Unlock()
		return
	}
	d.q = append(d.q, func() { close(ch) })
	d.cond.Signal()
	d.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-d.finished:
	}
}

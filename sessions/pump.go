package sessions

import (
	"sync"
	"time"
)

// Timing of classification (clock.go). A frame the agent marks as whole
// (synchronized output) is classified at once. Other output comes in
// bursts (one frame is often several writes), which are coalesced: a
// session is classified once it has been quiet for settle, but never
// later than maxDelay after its first change.
const (
	settle   = 2 * time.Millisecond
	maxDelay = 15 * time.Millisecond
	// syncHold bounds how long a frame held in synchronized output (?2026h)
	// may stay unclassified, should an agent never release it.
	syncHold = 150 * time.Millisecond
	// tick is the pump's grid: classification times are rounded up to it,
	// and after output the pump looks again on the next tick. It trades
	// latency for CPU: at 50 busy sessions a 2 ms grid cost about 8 % of a
	// core and 5 ms 5 %, and 5 ms keeps state latency inside its targets
	// (p50 5.8 ms, p99 13.5 ms; see docs/benchmarks.md).
	tick = 5 * time.Millisecond
	// floodRead is a read that means a flood (see pump.read).
	floodRead = 2 << 10
	// pumpBatch is how many ready PTYs one look returns.
	pumpBatch = 64
)

// The pump is one goroutine that reads every PTY session's output and
// classifies the sessions whose screens changed once their output settled.
//
// Why one and not a reader and a classifier per session: with many busy
// sessions the wake-ups, not the work, were most of agentd's CPU. Each PTY
// write woke a reader, which woke a classifier, whose timer woke it again;
// every wake is a thread switch or two, and a blocking-call system call also
// woke the runtime's monitor thread, which then polled every 20 µs for a
// while. The pump sleeps on one readiness set of every PTY (ready.go:
// epoll on Linux, select on macOS). The first
// write after a quiet spell wakes it at once; after output it looks again
// on the next tick, reads whatever every PTY has by then, and classifies
// the sessions due in the same wake-up, so while output streams in many
// sessions cost one wake-up a tick, not three a write.
//
// Nothing the pump does may block: a terminal's replies to the agent are
// written by their own goroutine (ptyDriver.reply), output to clients is
// queued (Events), and a session's work is contained so that a fault in one
// stays in it.
type pump struct {
	mu      sync.Mutex
	watch   readiness            // the PTYs' readiness; nil while the pump is idle
	fds     map[int32]*ptyDriver // the PTYs being read
	running bool                 // the pump's goroutine runs
	armedAt time.Time            // the deadline the pump waits with; zero: none
	pending []*ptyDriver         // sessions that changed since their last classification
	buf     []byte               // the pump's read buffer, one for every session
}

// schedule is what the pump keeps of one session's classification, guarded
// by pump.mu.
type schedule struct {
	changedAt time.Time // the first change not yet classified; zero: none
	dueAt     time.Time
	frames    uint64 // the terminal's FramesDone when last scheduled
}

// ptyReading is a session's PTY as the pump reads it, guarded by the
// driver's outMu, which is held over each read, so the file is never
// closed (and its number reused) under one.
type ptyReading struct {
	fd   int
	open bool
}

func newPump() *pump { return &pump{fds: map[int32]*ptyDriver{}, buf: make([]byte, 16<<10)} }

// The pump works on the terminal drivers it was given (add), not on their
// sessions: what it reads, schedules and holds back is theirs.

// add starts reading d's PTY, whose non-blocking descriptor is fd.
func (p *pump) add(d *ptyDriver, fd int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.watch == nil {
		w, err := newReadiness()
		if err != nil {
			return err
		}
		p.watch = w
	}
	if err := p.watch.add(fd); err != nil {
		return err
	}
	d.rd.fd, d.rd.open = fd, true
	p.fds[int32(fd)] = d
	p.startLocked()
	return nil
}

// remove stops reading d's PTY, and tells those waiting for the end of its
// session's output. The PTY may be closed once it returns.
func (p *pump) remove(d *ptyDriver) {
	d.outMu.Lock()
	defer d.outMu.Unlock()
	if !d.rd.open {
		return
	}
	d.rd.open = false
	p.mu.Lock()
	p.watch.remove(d.rd.fd)
	delete(p.fds, int32(d.rd.fd))
	p.mu.Unlock()
	close(d.s.readDone)
}

func (p *pump) startLocked() {
	if !p.running {
		p.running = true
		go p.run()
	}
}

// changed records that d's session changed now: its screen, a report, its
// input.
func (p *pump) changed(d *ptyDriver) {
	p.mu.Lock()
	defer p.mu.Unlock()
	due := p.scheduleLocked(d, time.Now())
	p.startLocked()
	if p.watch != nil && (p.armedAt.IsZero() || p.armedAt.After(due)) {
		// Wake the pump sooner than it meant to.
		p.armedAt = due
		p.watch.arm(p.armedAt)
	}
}

// scheduleLocked records a change of d's session at now, and returns when
// it is due to be classified (classifyAt).
func (p *pump) scheduleLocked(d *ptyDriver, now time.Time) time.Time {
	sc := &d.sched
	if sc.changedAt.IsZero() {
		sc.changedAt = now
		p.pending = append(p.pending, d)
	}
	frames := d.term.FramesDone()
	whole := frames != sc.frames && !d.term.InSync()
	sc.frames = frames
	sc.dueAt = timeAt(now, classifyAt(clockOf(sc.changedAt), clockOf(now), whole))
	return sc.dueAt
}

func (p *pump) run() {
	events := make([]int32, pumpBatch)
	n := p.readyNow(events)
	for {
		flood := p.read(events[:n])
		p.classifyDue()
		p.mu.Lock()
		if len(p.fds) == 0 && len(p.pending) == 0 {
			// Nothing to read or classify: the pump holds no goroutine and
			// no file until there is again.
			p.running = false
			if p.watch != nil {
				p.watch.close()
				p.watch, p.armedAt = nil, time.Time{}
			}
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		now := time.Now()
		switch {
		case flood || n == len(events):
			// An agent writes as fast as it can, or more PTYs are ready
			// than one look returns: read on at once.
			n = p.readyNow(events)
		case n > 0:
			// Output came: look again on the next tick, and take what
			// came by then in one go. A tick that finds nothing parks.
			p.sleep(onTick(now.Add(time.Nanosecond)))
			n = p.readyNow(events)
		default:
			n = p.park(events)
		}
	}
}

// readyNow fills fds with the PTYs that can be read, without waiting.
func (p *pump) readyNow(fds []int32) int {
	p.mu.Lock()
	w := p.watch
	p.mu.Unlock()
	if w == nil {
		return 0
	}
	return w.ready(fds)
}

// sleep waits until the time until, whatever the PTYs do.
func (p *pump) sleep(until time.Time) {
	p.mu.Lock()
	w := p.watch
	p.mu.Unlock()
	if w == nil {
		time.Sleep(time.Until(until))
		return
	}
	w.sleep(until)
}

// park waits until a PTY can be read or the next classification is due.
func (p *pump) park(fds []int32) int {
	p.mu.Lock()
	p.armedAt = p.nextLocked()
	w := p.watch
	if w == nil {
		// No PTY yet, only a classification to wait for.
		wait := time.Until(p.armedAt)
		p.mu.Unlock()
		time.Sleep(wait)
		return 0
	}
	w.arm(p.armedAt)
	p.mu.Unlock()
	return w.wait(fds)
}

// read reads each PTY in events once and passes on what it read. It
// reports whether any read was a flood's: a PTY gives at most its 4 KB
// line buffer a read, so a read of half that means the agent writes faster
// than once a tick can take, and more is waiting.
func (p *pump) read(fds []int32) (flood bool) {
	for _, fd := range fds {
		p.mu.Lock()
		d := p.fds[fd]
		p.mu.Unlock()
		if d == nil {
			continue
		}
		n, err := d.read(p.buf)
		flood = flood || n >= floodRead
		if err != nil {
			// The agent and everything it started closed the PTY.
			p.remove(d)
		}
	}
	return flood
}

// classifyDue classifies every session that is due.
func (p *pump) classifyDue() {
	p.mu.Lock()
	due := p.takeDueLocked(time.Now())
	p.mu.Unlock()
	for _, d := range due {
		if s := d.s; !s.isBroken() {
			s.contain("classifying", func() { s.update() })
		}
	}
}

// takeDueLocked removes the sessions due at now from pending and returns
// their drivers. A session holding a frame in synchronized output waits
// for its end, up to syncHold after its first change.
func (p *pump) takeDueLocked(now time.Time) []*ptyDriver {
	var due []*ptyDriver
	kept := p.pending[:0]
	for _, d := range p.pending {
		sc := &d.sched
		if sc.dueAt.After(now) {
			kept = append(kept, d)
			continue
		}
		if hold := timeAt(now, heldUntil(clockOf(sc.changedAt))); d.term.InSync() && now.Before(hold) {
			// Half a frame is on screen: wait for the agent to finish it.
			sc.dueAt = hold
			kept = append(kept, d)
			continue
		}
		sc.changedAt = time.Time{}
		due = append(due, d)
	}
	clear(p.pending[len(kept):])
	p.pending = kept
	return due
}

// nextLocked is when the next pending session is due; zero if none is.
func (p *pump) nextLocked() time.Time {
	var next time.Time
	for _, d := range p.pending {
		if next.IsZero() || d.sched.dueAt.Before(next) {
			next = d.sched.dueAt
		}
	}
	return next
}

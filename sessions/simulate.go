package sessions

import (
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/sessions/term"
)

// Transition is a state change found by Simulate: the state, and the index
// of the write that completed the burst it appeared in.
type Transition struct {
	Write int
	State State
	// Wait is how long after write Write the pump's clock decides it: the
	// settle and tick, a held synchronized frame, or a second look a rule
	// asked for (a hold, input.ready_after). A live run can be no faster.
	Wait time.Duration
}

// Simulate runs recorded output through the same emulator, timing and
// decision (machine.step, by way of a Decider) a live session uses, on a clock of its own instead of a PTY's:
// the pump reads a write at once when it was parked and on the next tick
// while output streams in, a session is classified once its output settled
// (see pump.changed), and not while the agent holds synchronized output. It
// returns every state change, so a live run can be checked and timed
// against it. The live pump's ticks are wall-clock aligned and these start
// at the first write, so a live run can split or join a burst here and
// there.
func Simulate(m *detect.Manifest, cols, rows int, writes [][]byte, gaps []time.Duration) []Transition {
	t := term.New(term.Options{Cols: cols, Rows: rows})
	d := NewDecider(m)
	var out []Transition
	// writeAt[i] is when write i arrives, on onPumpTiming's axis.
	writeAt := make([]time.Duration, len(writes))
	for i := 1; i < len(writes); i++ {
		writeAt[i] = writeAt[i-1] + gaps[i]
	}
	onPumpTiming(t, writes, gaps, func(write int, at time.Duration) time.Duration {
		before := d.machine.state
		next, again := d.decide(t.Snapshot(), at)
		if next.key() != before.key() {
			var wait time.Duration
			if write >= 0 {
				wait = at - writeAt[write]
			}
			out = append(out, Transition{Write: write, State: next, Wait: wait})
		}
		return again
	})
	return out
}

// onPumpTiming writes writes to t, gaps apart, and calls look at each
// moment the pump would have a live session decide: once a burst has
// settled, and again when a decision asked for a second look (look
// returns how soon; 0: none). write is the index of the last write made.
// The times are the pump's clock's (clock.go), on an axis from the first
// write; the live pump keeps its own schedule with the same functions.
func onPumpTiming(t *term.Terminal, writes [][]byte, gaps []time.Duration, look func(write int, at time.Duration) time.Duration) {
	// lookAt is a second look the last decision asked for, due as a
	// change at that moment is (a live session's recheck pokes the pump
	// then); -1 when none is due.
	lookAt := time.Duration(-1)
	lookNow := func(write int, at time.Duration) {
		lookAt = -1
		if again := look(write, at); again > 0 {
			lookAt = classifyAt(at+again, at+again, false)
		}
	}
	// looksUntil takes the second looks due before until, on the screen
	// as the last write left it.
	looksUntil := func(write int, until time.Duration) {
		for n := 0; lookAt >= 0 && lookAt < until && n < 100; n++ {
			lookNow(write, lookAt)
		}
	}
	// at is when write i arrives; read when the pump reads it.
	var at, read, changedAt time.Duration
	read = -2 * tick
	var frames uint64 // t.FramesDone() after the last write
	pending := false
	for i, w := range writes {
		if i > 0 {
			at += gaps[i]
		}
		next := readAt(read, at)
		if !pending {
			looksUntil(i-1, next)
			changedAt, pending = next, true
		}
		read = next
		t.Write(w)
		whole := t.FramesDone() != frames && !t.InSync()
		frames = t.FramesDone()
		due := classifyAt(changedAt, read, whole)
		if t.InSync() {
			// Half a frame is on screen: the pump waits for its end, up
			// to heldUntil.
			due = max(due, heldUntil(changedAt))
		}
		if i < len(writes)-1 && readAt(read, at+gaps[i+1]) <= due {
			continue // read before the classification is due: the burst goes on
		}
		pending = false
		lookNow(i, due)
	}
	looksUntil(len(writes)-1, 1<<62)
}

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
}

// Simulate runs recorded output through the same emulator, coalescing and
// decision a live session uses, without a PTY or a clock: writes closer
// together than the settle time form one burst, a burst is classified when
// it ends unless the agent holds synchronized output. It returns every
// state change, so a live run can be checked and timed against it.
func Simulate(m *detect.Manifest, cols, rows int, writes [][]byte, gaps []time.Duration) []Transition {
	t := term.New(term.Options{Cols: cols, Rows: rows})
	d := NewDecider(m)
	var out []Transition
	for i, w := range writes {
		t.Write(w)
		last := i == len(writes)-1
		if !last && gaps[i+1] < settle {
			continue // the burst goes on
		}
		if t.InSync() && !last {
			continue
		}
		before := d.s.state
		if next := d.Decide(t.Snapshot()); next.key() != before.key() {
			out = append(out, Transition{Write: i, State: next})
		}
	}
	return out
}

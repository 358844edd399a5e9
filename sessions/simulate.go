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
	// A session with no process: the same report bookkeeping as a live one.
	s := &Session{manifest: m, state: State{Name: Working, Reason: "process.starting"}}
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
		sc := t.Snapshot()
		v := m.Classify(sc)
		rep := s.freshReport(v, sc)
		if !v.Unmatched() || rep != nil {
			s.ready = true
		}
		next := decide(evidence{screen: v, report: rep, current: s.state, starting: !s.ready && m.HasIdleRule()})
		next.Agent = m.Name
		if next.key() != s.state.key() {
			out = append(out, Transition{Write: i, State: next})
		}
		s.state = next
	}
	return out
}

package sessions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions/term"
)

// The bench's simulated column and the replays' expected transitions come
// from Simulate; a live session decides in Session.look, when the pump's
// scheduling says. Both step the same machine on the same clock
// (clock.go), and this test holds them to it: every committed recording
// is played through Simulate and through a live session on the pump's own
// scheduling (lookLive), and every transition must agree, state, reason
// and write.
// The live side is a real Session with its terminal driver (facts from
// its emulator and verdict cache), its manager and its publishing; only
// the PTY and the process are left out (a replay has none), and its clock
// is the recording's.
func TestLiveDecisionIsSimulated(t *testing.T) {
	recordings, transitions := 0, 0
	eachRecording(t, func(name string, m *detect.Manifest, rec recording.Session, writes [][]byte, gaps []time.Duration) {
		want := Simulate(m, rec.Cols, rec.Rows, writes, gaps)
		got := lookLive(m, rec.Cols, rec.Rows, writes, gaps)
		if d := diffTransitions(got, want); d != "" {
			t.Errorf("%s: the live decision differs from Simulate's: %s", name, d)
		}
		recordings++
		transitions += len(want)
	})
	if transitions == 0 {
		t.Fatal("no transitions in any recording: nothing was compared")
	}
	if !t.Failed() {
		t.Logf("%d recordings, %d transitions, all alike", recordings, transitions)
	}
}

// eachRecording calls fn with every committed recording
// (fixtures/*/*/sessions) whose agent has rules, read by readRecording;
// name is its path under fixtures.
func eachRecording(t testing.TB, fn func(name string, m *detect.Manifest, rec recording.Session, writes [][]byte, gaps []time.Duration)) {
	t.Helper()
	rules, errs := detect.Load(nil, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	files, _ := filepath.Glob("../fixtures/*/*/sessions/*.json")
	if len(files) < 100 {
		t.Fatalf("found %d recordings under fixtures/*/*/sessions: the corpus is missing", len(files))
	}
	for _, f := range files {
		if m, rec, writes, gaps := readRecording(t, rules, f); m != nil {
			name, _ := filepath.Rel("../fixtures", f)
			fn(name, m, rec, writes, gaps)
		}
	}
}

// readRecording reads the recording f (its .json, with .raw and .timing
// beside it), pauses capped at 500 ms as the live replays play them; m
// is nil when its agent has no rules.
func readRecording(t testing.TB, rules *detect.Set, f string) (m *detect.Manifest, rec recording.Session, writes [][]byte, gaps []time.Duration) {
	t.Helper()
	data, err := os.ReadFile(f)
	if err != nil || json.Unmarshal(data, &rec) != nil {
		t.Fatalf("read %s: %v", f, err)
	}
	m, ok := rules.Lookup(rec.Agent)
	if !ok {
		return nil, rec, nil, nil
	}
	base := strings.TrimSuffix(f, ".json")
	writes, gaps, err = recording.Read(base+".raw", base+".timing")
	if err != nil {
		t.Fatal(err)
	}
	return m, rec, writes, recording.Capped(gaps, 500*time.Millisecond)
}

// lookLive plays writes into a live Session and has it look when the
// pump's own scheduling says (a pump's scheduleLocked, takeDueLocked and
// nextLocked, on a virtual clock), returning every state it published. It
// shares with Simulate only the pump's clock (clock.go) and when a write
// is read (readAt: the kernel and the pump's run loop): the loop that
// turns them into classifications is the pump's here and Simulate's own
// there. A decision's second look is the recheck's poke, at its moment.
func lookLive(m *detect.Manifest, cols, rows int, writes [][]byte, gaps []time.Duration) []Transition {
	ev := &recEvents{states: map[string][]State{}}
	mgr := NewManager(Options{}, ev)
	start := time.Unix(0, 0)
	var clock time.Duration
	mgr.now = func() time.Time { return start.Add(clock) }
	s := &Session{ID: "replay", mgr: mgr, manifest: m, base: m, machine: newMachine(startingState(m.Name, start))}
	s.lastPublished = s.machine.state
	d := &ptyDriver{s: s, term: term.New(term.Options{Cols: cols, Rows: rows})}
	s.drv = d
	p := newPump() // its goroutine never runs: this loop is its clock
	var out []Transition
	recheck := time.Duration(-1) // when the last decision's second look pokes; -1: none
	written := -1                // the last write made
	// until runs the pump's classifications, and the rechecks' pokes,
	// due before the moment end.
	until := func(end time.Duration) {
		for n := 0; n < 1000; n++ {
			next := time.Duration(-1)
			if d := p.nextLocked(); !d.IsZero() {
				next = d.Sub(start)
			}
			if recheck >= 0 && recheck < end && (next < 0 || recheck < next) {
				clock, recheck = recheck, -1
				p.scheduleLocked(d, start.Add(clock))
				continue
			}
			if next < 0 || next >= end {
				return
			}
			clock = next
			for range p.takeDueLocked(start.Add(clock)) {
				n := len(ev.states[s.ID])
				_, again := s.look()
				recheck = -1
				if again > 0 {
					recheck = clock + again
				}
				for _, st := range ev.states[s.ID][n:] {
					out = append(out, Transition{Write: written, State: st})
				}
			}
		}
	}
	var at, read time.Duration
	read = -2 * tick
	for i, w := range writes {
		if i > 0 {
			at += gaps[i]
		}
		next := readAt(read, at)
		until(next)
		clock, read = next, next
		d.term.Write(w)
		written = i
		p.scheduleLocked(d, start.Add(clock))
	}
	until(1 << 62)
	return out
}

func diffTransitions(got, want []Transition) string {
	for i := 0; i < max(len(got), len(want)); i++ {
		switch {
		case i >= len(got):
			return "live missed " + describe(want[i])
		case i >= len(want):
			return "live added " + describe(got[i])
		case got[i].Write != want[i].Write || got[i].State.key() != want[i].State.key() || got[i].State.Reason != want[i].State.Reason:
			return "live " + describe(got[i]) + ", simulated " + describe(want[i])
		}
	}
	return ""
}

func describe(tr Transition) string {
	s := tr.State.Name + " (" + tr.State.Reason + ")"
	if tr.State.Prompt != nil {
		s += " prompt " + tr.State.Prompt.ID
	}
	return s + " at write " + strconv.Itoa(tr.Write)
}

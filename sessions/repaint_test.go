package sessions

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/sessions/term"
)

// outEvents keeps the states and the output sessions report.
type outEvents struct {
	*recEvents
	omu sync.Mutex
	out map[string]*strings.Builder
}

func newOutEvents() *outEvents {
	return &outEvents{recEvents: &recEvents{states: map[string][]State{}}, out: map[string]*strings.Builder{}}
}

func (e *outEvents) Output(id, data string) {
	e.omu.Lock()
	defer e.omu.Unlock()
	b := e.out[id]
	if b == nil {
		b = &strings.Builder{}
		e.out[id] = b
	}
	b.WriteString(data)
}

func (e *outEvents) output(id string) string {
	e.omu.Lock()
	defer e.omu.Unlock()
	if b := e.out[id]; b != nil {
		return b.String()
	}
	return ""
}

var lineMark = regexp.MustCompile(`L(\d{7})\.`)

// marks are the line numbers in text, in order.
func marks(text string) []int {
	var out []int
	for _, m := range lineMark.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}

// A viewer that starts watching while the program writes as fast as it
// can gets the screen as it was, then every byte after it: each line once,
// in order, none lost between the repaint and the live output.
func TestWatchOutputLosesAndDoublesNothing(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	ev := newOutEvents()
	m := NewManager(Options{Rules: rules}, ev)
	defer m.Shutdown()
	dir := t.TempDir()
	stop := filepath.Join(dir, "stop")
	script := `i=0; while [ ! -e stop ]; do i=$((i+1)); printf 'L%07d.\n' $i; done; printf 'END\n'; sleep 60`
	s, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "-c", script}, Cwd: dir, Cols: 40, Rows: 10})
	if err != nil {
		t.Fatal(err)
	}
	awaitScreen(t, s, "L") // the program writes nothing else before END
	var repaint string
	starts := 0
	// A viewer slow to start (it queues the repaint to a slow client)
	// widens the gap where output could slip between the two.
	if err := s.WatchOutput(func(r string) bool { repaint = r; starts++; time.Sleep(50 * time.Millisecond); return true }); err != nil {
		t.Fatal(err)
	}
	defer s.UnwatchOutput()
	if starts != 1 {
		t.Fatalf("start was called %d times, want once", starts)
	}
	// Let the live output run on a while past the repaint, then stop it.
	before := marks(string(term.StripEscapes([]byte(repaint))))
	if len(before) == 0 {
		t.Fatalf("the repaint holds no line: %q", repaint)
	}
	last := before[len(before)-1]
	deadline := time.Now().Add(20 * time.Second)
	for {
		live := marks(ev.output(s.ID))
		if len(live) > 0 && live[len(live)-1] > last+1000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for a thousand lines after L%07d in the live output; it has %d lines", last, len(live))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for !strings.Contains(ev.output(s.ID), "END") {
		if time.Now().After(deadline) {
			t.Fatal("waited 20 s for END in the live output after the stop file was made")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A line the repaint shows half of goes on in the live output.
	all := marks(string(term.StripEscapes([]byte(repaint))) + string(term.StripEscapes([]byte(ev.output(s.ID)))))
	for i := 1; i < len(all); i++ {
		if all[i] != all[i-1]+1 {
			t.Fatalf("line L%07d follows L%07d (index %d of %d; the repaint ends at L%07d): a line lost or doubled", all[i], all[i-1], i, len(all), last)
		}
	}
}

// Repaint draws the screen on a blank terminal of the same size: without
// history only the rows on screen, with it the lines that scrolled off
// first. A viewer asking again is not a new one.
func TestRepaintWithAndWithoutHistory(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	m := NewManager(Options{Rules: rules}, newOutEvents())
	defer m.Shutdown()
	script := `for i in $(seq 1 100); do printf 'L%07d.\n' $i; done; printf 'done'; sleep 60`
	s, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "-c", script}, Cwd: t.TempDir(), Cols: 40, Rows: 10})
	if err != nil {
		t.Fatal(err)
	}
	awaitScreen(t, s, "done")
	screenOnly := marks(string(term.StripEscapes([]byte(s.Repaint(false)))))
	if len(screenOnly) != 9 || screenOnly[0] != 92 || screenOnly[8] != 100 {
		t.Fatalf("repaint without history holds lines %v, want the 9 on screen, 92 to 100", screenOnly)
	}
	withHistory := marks(string(term.StripEscapes([]byte(s.Repaint(true)))))
	if len(withHistory) != 100 {
		t.Fatalf("repaint with history holds %d lines, want all 100", len(withHistory))
	}
	for i, n := range withHistory {
		if n != i+1 {
			t.Fatalf("repaint with history: line %d is L%07d, want the scrollback first, in order", i, n)
		}
	}
	// Drawn on a blank terminal of the same size, the repaint is the screen.
	want, _, _ := s.Screen()
	blank := term.New(term.Options{Cols: 40, Rows: 10})
	_, _ = blank.Write([]byte(s.Repaint(false)))
	if got := blank.Snapshot(); strings.Join(got.Lines, "\n") != strings.Join(want.Lines, "\n") {
		t.Fatalf("the repaint drawn on a blank terminal shows\n%q\nthe session's screen is\n%q", got.Lines, want.Lines)
	}
	news := []bool{}
	for i := 0; i < 2; i++ {
		if err := s.WatchOutput(func(string) bool { news = append(news, i == 0); return i == 0 }); err != nil {
			t.Fatal(err)
		}
	}
	if !m.hasOutputSubscribers(s.ID) {
		t.Fatal("a viewer watches and the session has no output subscriber")
	}
	s.UnwatchOutput()
	if m.hasOutputSubscribers(s.ID) {
		t.Fatal("a repaint asked for again counted as a second viewer: one unwatch left a subscriber")
	}
}

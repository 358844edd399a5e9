package sessions

import (
	"reflect"
	"testing"

	"github.com/agentd/agentd/detect"
)

// Every field a rule can read takes part in sameScreen, or a verdict
// could be reused for a screen the rules would read differently.
func TestSameScreen(t *testing.T) {
	base := func() detect.Screen {
		return detect.Screen{Cols: 120, Rows: 3, Lines: []string{"a", "b", ""}, Styles: []string{"\x00", "\x00", ""}, CursorRow: 1, CursorCol: 2, CursorVisible: true,
			Title: "t", Status: &detect.StatusRecord{State: "working", Progress: -1}, StatusSeq: 1, Progress: detect.Progress{State: -1}}
	}
	// A field added to detect.Screen must be added to sameScreen and here.
	if n := reflect.TypeOf(detect.Screen{}).NumField(); n != 12 {
		t.Fatalf("detect.Screen has %d fields; sameScreen compares 12", n)
	}
	if !sameScreen(base(), base()) {
		t.Fatal("equal screens differ")
	}
	for name, change := range map[string]func(*detect.Screen){
		"line":      func(s *detect.Screen) { s.Lines[2] = "c" },
		"rows":      func(s *detect.Screen) { s.Lines = s.Lines[:2] },
		"style":     func(s *detect.Screen) { s.Styles[1] = string(rune(detect.StyleReverse)) },
		"size":      func(s *detect.Screen) { s.Cols = 80 },
		"cursor":    func(s *detect.Screen) { s.CursorCol = 3 },
		"visible":   func(s *detect.Screen) { s.CursorVisible = false },
		"title":     func(s *detect.Screen) { s.Title = "u" },
		"alt":       func(s *detect.Screen) { s.AltScreen = true },
		"status":    func(s *detect.Screen) { s.Status = &detect.StatusRecord{State: "idle", Progress: -1} },
		"no status": func(s *detect.Screen) { s.Status = nil },
		"seq":       func(s *detect.Screen) { s.StatusSeq = 2 },
		"progress":  func(s *detect.Screen) { s.Progress = detect.Progress{State: 1, Value: 5} },
	} {
		s := base()
		change(&s)
		if sameScreen(base(), s) {
			t.Errorf("%s: a changed screen reads as the same", name)
		}
	}
	var c verdictCache
	m := &detect.Manifest{Name: "x"}
	if _, ok := c.lookup(m, base()); ok {
		t.Fatal("empty cache hit")
	}
	c.store(m, base(), detect.Verdict{State: "working"})
	if v, ok := c.lookup(m, base()); !ok || v.State != "working" {
		t.Fatal("cache missed the same screen")
	}
	if _, ok := c.lookup(&detect.Manifest{Name: "y"}, base()); ok {
		t.Fatal("cache hit for other rules")
	}
}

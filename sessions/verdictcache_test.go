package sessions

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

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
	if _, why := c.lookup(m, base()); why != reuseNone {
		t.Fatal("empty cache hit")
	}
	c.store(m, base(), detect.Verdict{State: "working"})
	if v, why := c.lookup(m, base()); why != reuseSame || v.State != "working" {
		t.Fatal("cache missed the same screen")
	}
	if _, why := c.lookup(&detect.Manifest{Name: "y"}, base()); why != reuseNone {
		t.Fatal("cache hit for other rules")
	}
}

// The cache stands by a verdict over what its rules cannot see, and only
// that: the cursor, and spinner glyphs the rules do not tell apart, for
// a rule's verdict without a prompt.
func TestVerdictCacheReuse(t *testing.T) {
	m, err := detect.ParseManifest("t.toml", []byte(`name = "t"
[[rule]]
id = "ask"
state = "blocked"
match = ['Allow\?']
prompt = "p"
[[rule]]
id = "finished"
state = "done"
match = ['^✻ done']
[[rule]]
id = "spinner"
state = "working"
match = ['^[✶✻✽] \S+…']
[prompt.p]
kind = "permission"
question = 'Allow\?'
option = '^\s*(?P<id>\d)\. (?P<label>\w+)'
keys = "{id}"
`))
	if err != nil {
		t.Fatal(err)
	}
	screen := func(rows ...string) detect.Screen {
		sc := detect.ScreenFromText(strings.Join(rows, "\n"), 40, 4)
		sc.Styles = make([]string, len(sc.Lines))
		for i, l := range sc.Lines {
			sc.Styles[i] = strings.Repeat("\x00", utf8.RuneCountInString(l))
		}
		return sc
	}
	moved := func(sc detect.Screen) detect.Screen { sc.CursorCol++; return sc }
	styled := func(sc detect.Screen) detect.Screen {
		sc.Styles = slices.Clone(sc.Styles)
		sc.Styles[0] = string(rune(detect.StyleBold)) + sc.Styles[0][1:]
		return sc
	}
	titled := func(title string) func(detect.Screen) detect.Screen {
		return func(sc detect.Screen) detect.Screen { sc.Title = title; return sc }
	}
	working := screen("✶ Brewing…", "", "> ")
	for _, c := range []struct {
		name string
		from detect.Screen
		to   detect.Screen
		want reuse
	}{
		{"same", working, working, reuseSame},
		{"cursor", working, moved(working), reuseCursor},
		{"spinner", working, screen("✽ Brewing…", "", "> "), reuseSpinner},
		{"spinner and cursor", working, moved(screen("✽ Brewing…", "", "> ")), reuseSpinner},
		{"spinner styles", working, styled(working), reuseSpinner},
		{"glyphs of other lengths in UTF-8", screen("✶ Brewing… · x", "", "> "), screen("✶ Brewing… ⠋ x", "", "> "), reuseSpinner},
		{"spinner in the title", titled("⠋ t")(working), titled("⠙ t")(working), reuseSpinner},
		{"a glyph the rules name", working, screen("✻ Brewing…", "", "> "), reuseNone},
		{"braille for a star", working, screen("⠋ Brewing…", "", "> "), reuseNone},
		{"a letter", working, screen("✶ Brewinf…", "", "> "), reuseNone},
		{"a digit", screen("✶ Brewing… 1s", "", "> "), screen("✶ Brewing… 2s", "", "> "), reuseNone},
		{"a row longer", working, screen("✶ Brewing…", "", "> a"), reuseNone},
		{"a glyph longer", working, screen("✶ Brewing……", "", "> "), reuseNone},
		{"title", titled("a")(working), titled("b")(working), reuseNone},
		{"idle: the generic reader reads the cursor", screen("hello", "> "), moved(screen("hello", "> ")), reuseNone},
		{"blocked: read again", screen("Allow? ⠋", "1. Yes", "2. No"), screen("Allow? ⠙", "1. Yes", "2. No"), reuseNone},
		{"blocked, cursor moved", screen("Allow?", "1. Yes", "2. No"), moved(screen("Allow?", "1. Yes", "2. No")), reuseCursor},
		{"blocked, styles", screen("Allow?", "1. Yes", "2. No"), styled(screen("Allow?", "1. Yes", "2. No")), reuseNone},
	} {
		var vc verdictCache
		v := m.Classify(c.from)
		vc.store(m, c.from, v)
		got, why := vc.lookup(m, c.to)
		if why != c.want {
			t.Errorf("%s: %v, want %v (verdict %s)", c.name, why, c.want, v.Reason)
			continue
		}
		if why != reuseNone {
			if d := verdictDiff(m, got, m.Classify(c.to)); d != "" {
				t.Errorf("%s: reused a verdict the rules do not give: %s", c.name, d)
			}
		}
	}
}

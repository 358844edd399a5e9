package detect_test

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/detect"
)

// The plan approval as issue 15 reported it, typed in as text (no capture
// shows it: in the recorded ones a rule separates the plan from the
// question): Claude's plan, a numbered list, in the same region as the
// question and the menu. Only the menu under the question is options; the
// plan's "1." is prose, and answering it would type 1, "Yes, and use auto
// mode".
func TestPlanStepsAreNoOptions(t *testing.T) {
	screen := strings.Join([]string{
		"────────────────────────────────────────────────────────────────────────────────",
		" Ready to code?",
		"",
		" Here is Claude's plan:",
		" 1. Move greet() into greeting.py",
		" 2. Import it from main.py",
		" 3. Run the tests",
		"",
		" Claude has written up a plan and is ready to execute. Would you like to",
		" proceed?",
		"",
		" ❯ 1. Yes, and use auto mode",
		"   2. Yes, manually approve edits",
		"   3. Tell Claude what to change",
		"      shift+tab to approve with this feedback",
		"",
		" ctrl+g to edit in Vim · ~/.claude/plans/make-the-plan-sorted-octopus.md",
	}, "\n")
	m := claude(t)
	v := m.Classify(detect.ScreenFromText(screen, 80, 24))
	if v.State != detect.StateBlocked || v.Prompt == nil {
		t.Fatalf("verdict %+v, want blocked", v)
	}
	var got []string
	for _, o := range v.Prompt.Options {
		got = append(got, o.ID+"="+o.Label+" keys "+o.Keys)
	}
	want := []string{"1=Yes, and use auto mode keys 1", "2=Yes, manually approve edits keys 2", "3=Tell Claude what to change keys 3"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("options:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if q := "Claude has written up a plan and is ready to execute. Would you like to proceed?"; v.Prompt.Question != q {
		t.Errorf("question %q, want %q", v.Prompt.Question, q)
	}
}

// A numbered menu with no question above it cannot be told from a
// numbered list: it is still blocked (the rule says so), but no options are
// read: free text and the terminal only, no key typed for a guess.
func TestMenuWithoutQuestionIsNotRead(t *testing.T) {
	screen := strings.Join([]string{
		"────────────────────────────────────────────────────────────────────────────────",
		" Steps done so far",
		"",
		" ❯ 1. Moved greet() into greeting.py",
		"   2. Imported it from main.py",
	}, "\n")
	v := claude(t).Classify(detect.ScreenFromText(screen, 80, 24))
	if v.State != detect.StateBlocked || v.Prompt == nil || len(v.Prompt.Options) != 0 || !v.Prompt.Freeform {
		t.Errorf("verdict %+v (prompt %+v), want blocked with no options and free text", v, v.Prompt)
	}
}

func claude(t *testing.T) *detect.Manifest {
	t.Helper()
	m, ok := loadSet(t).Lookup("claude")
	if !ok {
		t.Fatal("no claude manifest")
	}
	return m
}

// A menu that shows its selection only by a background colour: the option
// drawn so is the selected one, and the arrow keys count from it.
func TestSelectedByStyle(t *testing.T) {
	m, err := detect.ParseManifest("grid.toml", []byte(`name = "grid"
[[rule]]
id = "menu"
state = "blocked"
match = ['Allow this\?']
prompt = "menu"
[prompt.menu]
kind = "permission"
question = '^(Allow this\?)$'
option = '^\s{2}(?P<label>\S.*?)\s*$'
keys = "<down*{down}><enter>"
selected_style = "background"
`))
	if err != nil {
		t.Fatal(err)
	}
	plain := func(s string) string { return strings.Repeat("\x00", len([]rune(s))) }
	lit := func(s string) string { return strings.Repeat(string(rune(detect.StyleBackground)), len([]rune(s))) }
	s := detect.Screen{Cols: 40, Rows: 4, Lines: []string{"Allow this?", "  Yes", "  Yes, always", "  No"}}
	s.Styles = []string{plain(s.Lines[0]), plain(s.Lines[1]), plain("  ") + lit("Yes, always"), plain(s.Lines[3])}
	v := m.Classify(s)
	if v.Prompt == nil || len(v.Prompt.Options) != 3 {
		t.Fatalf("verdict %+v prompt %+v", v, v.Prompt)
	}
	for i, want := range []bool{false, true, false} {
		if got := v.Prompt.Options[i].Selected; got != want {
			t.Errorf("option %d %q selected %v, want %v", i, v.Prompt.Options[i].Label, got, want)
		}
	}
	if keys := v.Prompt.Options[2].Keys; keys != "\x1b[B\r" {
		t.Errorf("keys for No = %q, want one down then enter", keys)
	}
	s.Styles = nil // the same screen as text alone: nothing is selected by style
	if v := m.Classify(s); v.Prompt.Options[1].Selected {
		t.Errorf("selected without styles: %+v", v.Prompt.Options)
	}
	if _, err := detect.ParseManifest("x.toml", []byte("name = \"x\"\n[prompt.p]\nkind = \"permission\"\noption = '(?P<label>x)'\nkeys = \"{id}\"\nselected_style = \"sparkly\"\n")); err == nil || !strings.Contains(err.Error(), `x.toml:6: prompt "p": selected_style "sparkly"`) {
		t.Errorf("an unknown style: %v", err)
	}
}

// A menu whose agent takes keys one at a time (key_gap) and shows its
// selection is answered a step at a time: each arrow once the last one
// shows. Without a selection on screen there is nothing to watch.
func TestSteppedMenu(t *testing.T) {
	manifest := func(gap string) *detect.Manifest {
		m, err := detect.ParseManifest("grid.toml", []byte(`name = "grid"
[[rule]]
id = "menu"
state = "blocked"
match = ['Allow this\?']
prompt = "menu"
[prompt.menu]
kind = "permission"
question = '^(Allow this\?)$'
option = '^(?:(?P<selected>›)| ) (?P<label>\S.*?)\s*$'
keys = "<down*{down}><up*{up}><enter>"
`+gap))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	s := detect.Screen{Cols: 40, Rows: 4, Lines: []string{"Allow this?", "› Yes", "  Yes, always", "  No"}}
	if v := manifest("key_gap = \"40ms\"\n").Classify(s); v.Prompt == nil || !v.Prompt.Stepped {
		t.Errorf("key_gap and a selection on screen: %+v, want stepped", v.Prompt)
	}
	if v := manifest("").Classify(s); v.Prompt == nil || v.Prompt.Stepped {
		t.Errorf("no key_gap: %+v, want not stepped", v.Prompt)
	}
	s.Lines[1] = "  Yes"
	if v := manifest("key_gap = \"40ms\"\n").Classify(s); v.Prompt == nil || v.Prompt.Stepped {
		t.Errorf("no selection on screen: %+v, want not stepped", v.Prompt)
	}
}

// A key drawn in brackets inside its label ("[A]llow [D]eny") is the key;
// the label reads as the word. A question padded apart from its counter
// reads with one space, and each branch of an alternation may hold it.
func TestKeyInsideLabelAndPaddedQuestion(t *testing.T) {
	m, err := detect.ParseManifest("letters.toml", []byte(`name = "letters"
[[rule]]
id = "ask"
state = "blocked"
match = ['\[A\]llow']
prompt = "ask"
[prompt.ask]
kind = "permission"
question = '^Step (\d\s+of \d)$|^(Run\s+\S+\?)\s*$'
option = '(?P<label>\[(?P<key>[A-Z])\]\w+)'
keys = "{key}"
`))
	if err != nil {
		t.Fatal(err)
	}
	v := m.Classify(detect.Screen{Cols: 40, Rows: 3, Lines: []string{"Run  make?", " [A]llow [D]eny"}})
	if v.Prompt == nil || v.Prompt.Question != "Run make?" || len(v.Prompt.Options) != 2 {
		t.Fatalf("prompt %+v", v.Prompt)
	}
	for i, want := range []struct{ label, keys string }{{"Allow", "A"}, {"Deny", "D"}} {
		if o := v.Prompt.Options[i]; o.Label != want.label || o.Keys != want.keys {
			t.Errorf("option %d = %q keys %q, want %q keys %q", i, o.Label, o.Keys, want.label, want.keys)
		}
	}
	if v := m.Classify(detect.Screen{Cols: 40, Rows: 3, Lines: []string{"Step 2     of 3", " [A]llow [D]eny"}}); v.Prompt == nil || v.Prompt.Question != "2 of 3" {
		t.Fatalf("second branch's question: %+v", v.Prompt)
	}
}

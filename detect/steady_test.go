package detect

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The spinner glyphs are none a rule's plain reading could turn on:
// no ASCII (a "|/-\" spinner is text), no letter, digit or space (\w, \s,
// \b and \d test those without naming them), no line break.
func TestSpinnerRunes(t *testing.T) {
	for _, r := range spinnerCandidates() {
		if r <= 0x7f || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsSpace(r) || r == '\n' {
			t.Errorf("%q (%U) is no glyph to fold", r, r)
		}
		if !isSpinnerRune(r) {
			t.Errorf("%q (%U) listed but not a spinner rune", r, r)
		}
	}
	for _, r := range "aZ09 |/-\\*.#\n\u00a0" {
		if isSpinnerRune(r) {
			t.Errorf("%q is a spinner rune", r)
		}
	}
}

// Each verdict folds together the glyphs its rules cannot tell apart, and
// keeps apart the ones they can.
func TestSpinnersAlike(t *testing.T) {
	set, errs := Load(nil, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	claude, _ := set.Lookup("claude")
	spinners := func(m *Manifest, rule string) Spinners {
		t.Helper()
		s, ok := m.SpinnerBlind(Verdict{Agent: m.Name, State: StateWorking, Reason: m.Name + "." + rule})
		if !ok {
			t.Fatalf("%s.%s: its verdict outlasts no spinner", m.Name, rule)
		}
		return s
	}
	// "[·✢*✶✻✽✳] \S+…" holds them all; "^✻ \S+ for \d+[hms]" below it only
	// ✻, and "Enter to confirm · Esc to cancel" above it only ·.
	row := spinners(claude, "activity_row")
	if !row.Alike('✶', '✽') || !row.Alike('✢', '✻') {
		t.Error("claude: its spinner row's glyphs are not alike")
	}
	if row.Alike('✶', '·') || row.Alike('✶', '*') || row.Alike('a', 'b') || row.Alike('✶', '⠋') {
		t.Error("claude: a glyph its rules name is alike with another")
	}
	if footer := spinners(claude, "busy_footer"); footer.Alike('✶', '✻') || !footer.Alike('✶', '✽') {
		t.Error("claude: ✻, which a rule above its busy footer's names, is alike with another glyph")
	}
	if _, ok := claude.SpinnerBlind(Verdict{Agent: "claude", State: StateIdle, Reason: "claude.composer"}); ok {
		t.Error("claude: an idle verdict outlasts spinners: the generic reader read its screen")
	}
	if _, ok := claude.SpinnerBlind(Verdict{Agent: "claude", State: StateWorking, Reason: "claude.nonesuch"}); ok {
		t.Error("claude: a verdict of no rule outlasts spinners")
	}
	for _, m := range set.Manifests() {
		if len(m.Rules) > 0 && len(m.folds) != len(m.Rules) {
			t.Errorf("%s: %d folds for %d rules", m.Name, len(m.folds), len(m.Rules))
		}
		if testing.Verbose() && len(m.folds) > 0 {
			var groups []string
			last := m.folds[len(m.folds)-1]
			reps := map[rune][]rune{}
			for r, f := range last.rep {
				reps[f] = append(reps[f], r)
			}
			for _, g := range reps {
				slices.Sort(g)
				if len(g) > 12 {
					groups = append(groups, string(g[:6])+"…("+itoa(len(g))+")")
				} else {
					groups = append(groups, string(g))
				}
			}
			slices.Sort(groups)
			t.Logf("%-12s below its last rule: %s", m.Name, strings.Join(groups, " | "))
		}
	}
}

// A rule whose reason is the generic reader's: its verdict cannot be told
// from the reader's, and is never reused.
func TestReuseGenericReason(t *testing.T) {
	m, err := ParseManifest("x.toml", []byte(`name = "generic"
[[rule]]
id = "menu"
state = "working"
match = ['x']
`))
	if err != nil {
		t.Fatal(err)
	}
	v := m.Classify(ScreenFromText("x", 80, 3))
	if _, ok := m.SpinnerBlind(v); v.Reason != ReasonGenericMenu || m.CursorBlind(v) || ok {
		t.Fatalf("%+v reused", v)
	}
}

package detect

import (
	"regexp"
	"strings"
	"testing"
)

func TestRequiredLiteral(t *testing.T) {
	tests := map[string]string{
		`^(?:←\s+)?\s*[☐☒]\s*\S`:                      "☐|☒",
		`^(?:[·✢*✶✻✽✳] \S+…|\s*⎿[\s\x{a0}]+Running…)`: "…|Running…",
		`(?:yes|no)`:                            "yes|no",
		`^\s*Do you want to proceed\?$`:         "Do you want to proceed?",
		`(?m)^ℹ Request cancelled\.\s*$[^▀]*\z`: "ℹ Request cancelled.",
		`^ ?│ +(?:● +)?1\. Allow once\s+│\s*$`:  "1. Allow once",
		`(?i)press enter`:                       "",
		`x*abc`:                                 "abc",
		`(?:abcd)+z`:                            "abcd",
		`(?:abcd)?z`:                            "z",
		`^\S \S+… \(\d+s · esc to interrupt\)$`: "s · esc to interrupt)",
	}
	for src, want := range tests {
		p := newPattern(regexp.MustCompile("(?m)" + src))
		if got := strings.Join(p.need, "|"); got != want {
			t.Errorf("%s: need %q, want %q", src, got, want)
		}
	}
}

// The prefilter never changes an answer: on every capture's text, each
// manifest pattern answers the same with and without it.
func TestPrefilterKeepsAnswers(t *testing.T) {
	texts := []string{"Do you want to proceed?\n ❯ 1. Yes", "nothing here", " │ ● 1. Allow once   │", "ℹ Request cancelled.\n\n > "}
	set, _ := Load(nil, "")
	for _, m := range set.Manifests() {
		for _, r := range m.Rules {
			for _, p := range append(append([]pattern{}, r.cond.match...), r.cond.unless...) {
				for _, txt := range texts {
					if p.MatchString(txt) != p.re.MatchString(txt) {
						t.Errorf("%s.%s %s on %q: prefilter changed the answer", m.Name, r.ID, p.re, txt)
					}
				}
			}
		}
	}
}

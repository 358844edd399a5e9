package detect_test

import (
	"os"
	"strings"
	"testing"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/sessions/term"
)

// OpenCode 1.14.19 in the field drew its "Getting started" card in the
// sidebar with the card's left border in the two blank columns that part
// the sidebar from the session, on the rows of its permission box, and the
// box read idle: the sidebar was not cut, so "△ Permission required" had
// the card's words after it on its row. That release is not on the
// registry here, and the releases we can run keep the margin blank, so
// this screen is made: a real 1.14.41 permission prompt at 200x50 with a
// card of that shape drawn over its sidebar (borders at the margin's
// columns, then one column further in and out). Each reads as the
// unmarked screen does, with none of the card's words in the question or
// the options.
func TestSidebarCardInTheMarginIsLeftOut(t *testing.T) {
	raw, err := os.ReadFile("../fixtures/opencode/1.14.41/blocked/bash-script-200x50.raw")
	if err != nil {
		t.Fatal(err)
	}
	set := loadSet(t)
	var oc *detect.Manifest
	for _, m := range set.Manifests() {
		if m.Name == "opencode" {
			oc = m
		}
	}
	base := term.Render(raw, 200, 50)
	want := oc.Classify(base)
	if want.State != detect.StateBlocked || want.Prompt == nil {
		t.Fatalf("the unmarked screen reads %s (%s)", want.State, want.Reason)
	}
	card := []string{
		"╭──────────────────────────────────────╮",
		"│ Getting started                    ✕ │",
		"│ OpenCode includes free models so you │",
		"│ can start immediately.               │",
		"│ Connect from 75+ providers to use    │",
		"│ other models.                        │",
		"│ Connect provider            /connect │",
		"╰──────────────────────────────────────╯",
	}
	for _, col := range []int{157, 158, 159, 156} {
		s := base
		s.Lines = append([]string(nil), base.Lines...)
		s.Styles = nil
		for i, c := range card {
			row := 34 + i // the card's rows run beside "△ Permission required" (row 37)
			line := []rune(s.Lines[row])
			for len(line) < col {
				line = append(line, ' ')
			}
			s.Lines[row] = string(line[:col]) + c
		}
		got := oc.Classify(s)
		if got.State != want.State || got.Reason != want.Reason || got.Prompt == nil {
			t.Errorf("card at column %d: %s (%s), want %s (%s)\n%s", col, got.State, got.Reason, want.State, want.Reason, strings.Join(s.Lines[33:44], "\n"))
			continue
		}
		q, opts := got.Prompt.Question, got.Prompt.Options
		if q != want.Prompt.Question || len(opts) != len(want.Prompt.Options) {
			t.Errorf("card at column %d: question %q, %d options; want %q, %d", col, q, len(opts), want.Prompt.Question, len(want.Prompt.Options))
		}
		for _, o := range opts {
			if strings.Contains(o.Label, "Connect") || strings.Contains(o.Label, "│") {
				t.Errorf("card at column %d: option %q holds the card's words", col, o.Label)
			}
		}
	}
}

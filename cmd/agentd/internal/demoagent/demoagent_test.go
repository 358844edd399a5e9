//go:build unix

package demoagent

import (
	"slices"
	"strings"
	"testing"
)

// The demo agent reads keys whole however the PTY cuts its input: a paste
// and the Enter after it, split anywhere, are one paste and one Enter.
// (Split at the paste's end marker, it once showed "[201~" in its composer
// and never submitted.)
func TestSplitKeysAcrossReads(t *testing.T) {
	input := "\x1b[200~Add a NOTES.md file\x1b[201~\r\x1b[Bé"
	want := []string{"Add a NOTES.md file", "\r", "\x1b[B", "é"}
	for cut := 0; cut <= len(input); cut++ {
		var keys []string
		first, rest := splitKeys(input[:cut])
		keys = append(keys, first...)
		second, rest := splitKeys(rest + input[cut:])
		keys = append(keys, second...)
		if rest != "" || !slices.Equal(keys, want) {
			t.Errorf("cut at %d: keys %q, rest %q; want %q", cut, keys, rest, want)
		}
	}
	// A lone ESC waits for what may follow; the agent's loop takes it as
	// the Escape key after escapeTime.
	if keys, rest := splitKeys("1\x1b"); !slices.Equal(keys, []string{"1"}) || rest != "\x1b" {
		t.Errorf("a read ending in ESC: keys %q, rest %q; want [\"1\"] and the ESC held", keys, rest)
	}
}

// A terminal shorter than the prompt (a small Neovim split) once made the
// demo agent slice out of range and exit: it shows the prompt's last rows.
func TestDrawInAShortTerminal(t *testing.T) {
	for _, rows := range []int{2, 5, 10, 11, 24} {
		var out strings.Builder
		a := &demoAgent{out: &out, cols: 40, rows: rows, phase: "prompt", command: "touch NOTES.md"}
		a.draw()
		if !strings.Contains(out.String(), "Esc to cancel") || rows >= 5 && !strings.Contains(out.String(), "No, and tell the agent") {
			t.Errorf("at %d rows: the prompt's last rows are not drawn: %q", rows, out.String())
		}
	}
}

// Package detect decides, from one rendered terminal screen, what a coding
// agent is doing. It is pure: a Screen goes in, a Verdict comes out. It never
// does I/O and never reads a clock, so every rule can be tested on a fixture.
package detect

import (
	"strconv"
	"strings"
)

// Screen is a terminal screen as a person sees it, plus the out-of-band facts
// the terminal received (title, program-status records, progress).
type Screen struct {
	Cols, Rows int
	// Lines holds one entry per screen row, trailing blanks trimmed.
	Lines []string
	// Styles holds, for each row, one byte per rune of its line: that
	// glyph's Style bits. Nil when the screen came from text alone.
	Styles []string
	// CursorRow and CursorCol are zero-based.
	CursorRow, CursorCol int
	CursorVisible        bool
	Title                string
	AltScreen            bool
	// Status is the latest OSC 7501 program-status record, if any, and
	// StatusSeq counts the records received, so a new record can be told
	// from the same one seen again.
	Status    *StatusRecord
	StatusSeq uint64
	// Progress is the last OSC 9;4 progress report (state -1 when none).
	Progress Progress
}

// StatusRecord is one OSC 7501 record: `state=…:app=…[:kind=…][:msg=…]`.
type StatusRecord struct {
	State    string // idle, working, blocked, done, error
	App      string
	Kind     string // permission, question, auth
	Message  string // decoded msg
	Progress int    // -1 when absent
	ID       string
}

// Progress is an OSC 9;4 report: State 0 none, 1 normal, 2 error,
// 3 indeterminate, 4 paused; Value 0..100.
type Progress struct {
	State int
	Value int
}

// String renders the report for a "progress" region: "none", or the state's
// name and the value, e.g. "normal 40", "indeterminate 0".
func (p Progress) String() string {
	names := []string{"none", "normal", "error", "indeterminate", "paused"}
	if p.State < 1 || p.State >= len(names) {
		return "none"
	}
	return names[p.State] + " " + strconv.Itoa(p.Value)
}

// ScreenFromText builds a Screen from already-rendered text, one row per
// line. SGR colour sequences inside the text are removed. The screen is
// padded or cut to rows; cols only records the width.
func ScreenFromText(text string, cols, rows int) Screen {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.TrimSuffix(text, "\n")
	raw := strings.Split(text, "\n")
	if len(raw) > rows {
		raw = raw[len(raw)-rows:]
	}
	lines := make([]string, rows)
	for i, l := range raw {
		lines[i] = strings.TrimRight(stripSGR(l), " \t")
	}
	s := Screen{Cols: cols, Rows: rows, Lines: lines, CursorVisible: true, Progress: Progress{State: -1}}
	// Without a real cursor, place it after the last non-empty row.
	for i := len(raw) - 1; i >= 0; i-- {
		if lines[i] != "" {
			s.CursorRow = i
			s.CursorCol = len([]rune(lines[i]))
			break
		}
	}
	return s
}

// stripSGR removes CSI … m sequences (colours and text attributes).
func stripSGR(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == ':') {
				j++
			}
			if j < len(s) && s[j] == 'm' {
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Text joins the screen's lines with newlines.
func (s Screen) Text() string { return strings.Join(s.Lines, "\n") }

// Style bits, as Screen.Styles holds them: what a person sees of a glyph
// besides its text. (They are the emulator's, sessions/term/vt10x.)
const (
	StyleReverse    = 1 << iota // reverse video
	StyleBackground             // a background other than the default, reverse video included
	StyleForeground             // a foreground other than the default
	StyleBold
	StyleUnderline
	StyleItalic
)

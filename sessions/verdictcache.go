package sessions

import (
	"slices"
	"unicode/utf8"

	"github.com/agentd/agentd/detect"
)

// verdictCache is a session's last classified screen and its verdict. The
// rules are pure, so a screen that reads exactly as the last one (an agent
// repainting the same frame: nearly half the classifications on the
// recorded sessions) gets the same verdict without running them again; so
// does one that differs from it only in what the verdict's rules cannot
// read (reuse): the cursor, and a spinner glyph turning, another quarter.
type verdictCache struct {
	m  *detect.Manifest
	sc detect.Screen
	v  detect.Verdict
}

// reuse says why a verdict stood for a screen, or that it did not.
type reuse int

const (
	reuseNone    reuse = iota
	reuseSame          // the screen reads exactly as the last one
	reuseCursor        // only the cursor moved, and the verdict's rules do not read it
	reuseSpinner       // spinner glyphs turned (the cursor perhaps moved), and the rules cannot tell them apart
)

// lookup returns the cached verdict when m classified a screen that sc
// reads like to m's rules. A verdict that stands for a new screen is kept
// with it: the next screen shares its unchanged rows, so comparing them is
// comparing pointers.
func (c *verdictCache) lookup(m *detect.Manifest, sc detect.Screen) (detect.Verdict, reuse) {
	if c.m == nil || c.m != m {
		return detect.Verdict{}, reuseNone
	}
	why := reusable(m, c.v, c.sc, sc)
	if why == reuseNone {
		return detect.Verdict{}, reuseNone
	}
	c.sc = sc
	return c.v, why
}

func (c *verdictCache) store(m *detect.Manifest, sc detect.Screen, v detect.Verdict) {
	c.m, c.sc, c.v = m, sc, v
}

// sameScreen reports whether a and b read the same to the rules: every
// field a rule can look at. Unchanged rows share their strings (the
// terminal keeps them), so comparing lines is mostly comparing pointers.
func sameScreen(a, b detect.Screen) bool {
	return sameFields(a, b) && a.CursorRow == b.CursorRow && a.CursorCol == b.CursorCol && a.CursorVisible == b.CursorVisible &&
		a.Title == b.Title && slices.Equal(a.Lines, b.Lines) && slices.Equal(a.Styles, b.Styles)
}

// sameFields: a and b agree in everything but the cursor, the text (rows
// and title) and the styles.
func sameFields(a, b detect.Screen) bool {
	if a.Cols != b.Cols || a.Rows != b.Rows || a.AltScreen != b.AltScreen || a.StatusSeq != b.StatusSeq || a.Progress != b.Progress ||
		len(a.Lines) != len(b.Lines) || len(a.Styles) != len(b.Styles) {
		return false
	}
	return (a.Status == nil) == (b.Status == nil) && (a.Status == nil || *a.Status == *b.Status)
}

// reusable says whether v, m's verdict of screen a, is also b's, and why:
// b reads as a does (sameScreen), or differs from it only where v's rules
// cannot see (detect's CursorBlind, SpinnerBlind). Only rows that changed
// are read glyph by glyph.
func reusable(m *detect.Manifest, v detect.Verdict, a, b detect.Screen) reuse {
	if !sameFields(a, b) {
		return reuseNone
	}
	why := reuseSame
	if a.CursorRow != b.CursorRow || a.CursorCol != b.CursorCol || a.CursorVisible != b.CursorVisible {
		if !m.CursorBlind(v) {
			return reuseNone
		}
		why = reuseCursor
	}
	// spun: the text or its styles changed, which v may outlast only where
	// the change is spinner glyphs its rules cannot tell apart.
	var sp detect.Spinners
	spun := func() bool {
		if why != reuseSpinner {
			var ok bool
			if sp, ok = m.SpinnerBlind(v); !ok {
				return false
			}
			why = reuseSpinner
		}
		return true
	}
	if a.Title != b.Title && (!spun() || !spinnersAlike(sp, a.Title, b.Title)) {
		return reuseNone
	}
	for i := range a.Lines {
		if a.Lines[i] != b.Lines[i] && (!spun() || !spinnersAlike(sp, a.Lines[i], b.Lines[i])) {
			return reuseNone
		}
	}
	// A verdict that outlasts spinners reads no styles (SpinnerBlind).
	if !slices.Equal(a.Styles, b.Styles) && !spun() {
		return reuseNone
	}
	return why
}

// spinnersAlike says whether rows x and y differ only in glyphs alike in
// sp: the same runes but where both are spinner glyphs a verdict's rules
// cannot tell apart. It is folding both rows through one function, a
// glyph at a time, without making either.
func spinnersAlike(sp detect.Spinners, x, y string) bool {
	for x != "" && y != "" {
		// Equal bytes are equal runes: skip them a byte at a time, but
		// decode from the start of the rune they differ in.
		i := 0
		for i < len(x) && i < len(y) && x[i] == y[i] {
			i++
		}
		for i > 0 && i < len(x) && !utf8.RuneStart(x[i]) {
			i--
		}
		x, y = x[i:], y[i:]
		if x == "" || y == "" {
			break
		}
		rx, nx := utf8.DecodeRuneInString(x)
		ry, ny := utf8.DecodeRuneInString(y)
		// They differ here, so equal runes are bytes that are no UTF-8.
		if rx == ry || !sp.Alike(rx, ry) {
			return false
		}
		x, y = x[nx:], y[ny:]
	}
	return x == "" && y == ""
}

package sessions

import (
	"slices"

	"github.com/agentd/agentd/detect"
)

// verdictCache is a session's last classified screen and its verdict. The
// rules are pure, so a screen that reads exactly as the last one (an agent
// repainting the same frame: nearly half the classifications on the
// recorded sessions) gets the same verdict without running them again.
type verdictCache struct {
	m  *detect.Manifest
	sc detect.Screen
	v  detect.Verdict
}

// lookup returns the cached verdict when m classified a screen like sc.
func (c *verdictCache) lookup(m *detect.Manifest, sc detect.Screen) (detect.Verdict, bool) {
	if c.m == nil || c.m != m || !sameScreen(c.sc, sc) {
		return detect.Verdict{}, false
	}
	return c.v, true
}

func (c *verdictCache) store(m *detect.Manifest, sc detect.Screen, v detect.Verdict) {
	c.m, c.sc, c.v = m, sc, v
}

// sameScreen reports whether a and b read the same to the rules: every
// field a rule can look at. Unchanged rows share their strings (the
// terminal keeps them), so comparing lines is mostly comparing pointers.
func sameScreen(a, b detect.Screen) bool {
	if a.Cols != b.Cols || a.Rows != b.Rows || a.CursorRow != b.CursorRow || a.CursorCol != b.CursorCol ||
		a.CursorVisible != b.CursorVisible || a.Title != b.Title || a.AltScreen != b.AltScreen ||
		a.StatusSeq != b.StatusSeq || a.Progress != b.Progress {
		return false
	}
	if (a.Status == nil) != (b.Status == nil) || (a.Status != nil && *a.Status != *b.Status) {
		return false
	}
	return slices.Equal(a.Lines, b.Lines) && slices.Equal(a.Styles, b.Styles)
}

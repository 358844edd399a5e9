package sessions

import (
	"fmt"
	"strings"
)

// Repaint returns bytes that draw the session's current screen on a blank
// terminal of the same size: what a new viewer needs before live output.
// Colours are not kept; text, layout and the cursor are.
func (s *Session) Repaint() string {
	if s.acp != nil {
		return ""
	}
	sc, _ := s.Screen()
	var b strings.Builder
	b.WriteString("\x1b[0m\x1b[?25l\x1b[H\x1b[2J")
	for i, line := range sc.Lines {
		if line == "" {
			continue
		}
		fmt.Fprintf(&b, "\x1b[%d;1H%s", i+1, line)
	}
	fmt.Fprintf(&b, "\x1b[%d;%dH", sc.CursorRow+1, sc.CursorCol+1)
	if sc.CursorVisible {
		b.WriteString("\x1b[?25h")
	}
	return b.String()
}

// WatchOutput starts a viewer of the session's output: start is given the
// repaint of the screen as it is, and no output can come between that
// screen and the live output that follows it (start must queue the repaint
// and make the viewer's output flow before it returns). start reports
// whether the viewer is new, rather than one asking for a repaint again.
func (s *Session) WatchOutput(start func(repaint string) (isNew bool)) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if start(s.Repaint()) {
		s.mgr.Subscribe(s.ID, true)
	}
}

// UnwatchOutput ends one viewer of the session's output.
func (s *Session) UnwatchOutput() { s.mgr.Subscribe(s.ID, false) }

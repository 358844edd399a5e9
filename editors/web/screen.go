package web

import (
	"fmt"
	"sync"

	"github.com/hinshun/vt10x"
)

// screen is one watched session's terminal as the page draws it: the
// session's output (a repaint with colours, then live bytes, from
// session/subscribe) fed into an emulator of the session's size. The daemon
// offers session/read as text only; colours need the output stream.
type screen struct {
	mu   sync.Mutex
	vt   vt10x.Terminal
	cols int
	rows int
	rev  uint64 // bumped on every write: the page is sent a new frame only when it moved
}

func newScreen(cols, rows int) *screen {
	if cols < 2 {
		cols = 120
	}
	if rows < 2 {
		rows = 40
	}
	return &screen{vt: vt10x.New(vt10x.WithSize(cols, rows)), cols: cols, rows: rows}
}

func (s *screen) write(data string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.vt.Write([]byte(data))
	s.rev++
}

// reset starts again from a blank terminal: a repaint follows (dropped
// output, or a new subscription).
func (s *screen) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vt = vt10x.New(vt10x.WithSize(s.cols, s.rows))
	s.rev++
}

// Frame is the screen as the page draws it: each row a list of runs of
// text sharing one style.
type Frame struct {
	Host      string  `json:"host,omitempty"` // with --hosts
	SessionID string  `json:"sessionId"`
	Cols      int     `json:"cols"`
	Rows      int     `json:"rows"`
	Lines     [][]Run `json:"lines"`
	CursorRow int     `json:"cursorRow"`
	CursorCol int     `json:"cursorCol"`
	Cursor    bool    `json:"cursor"`
}

// Run is text in one style. FG and BG are CSS colours, empty for the
// page's own default; Attr holds vt10x's attribute bits (bold, italic,
// underline) the page maps to classes.
type Run struct {
	Text string `json:"t"`
	FG   string `json:"f,omitempty"`
	BG   string `json:"b,omitempty"`
	Attr int    `json:"a,omitempty"`
}

// attributes the page draws; the rest (wrap, wide) are layout, not style.
const drawnAttrs = vt10x.AttrBold | vt10x.AttrItalic | vt10x.AttrUnderline

func (s *screen) frame(id string) (Frame, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vt.Lock()
	defer s.vt.Unlock()
	cur := s.vt.Cursor()
	f := Frame{SessionID: id, Cols: s.cols, Rows: s.rows, Lines: make([][]Run, s.rows),
		CursorRow: cur.Y, CursorCol: cur.X, Cursor: s.vt.CursorVisible()}
	buf := make([]rune, 0, s.cols)
	for y := 0; y < s.rows; y++ {
		var line []Run
		var fg, bg vt10x.Color
		var attr int
		flush := func() {
			if len(buf) > 0 {
				line = append(line, Run{Text: string(buf), FG: cssColor(fg, false), BG: cssColor(bg, true), Attr: attr})
				buf = buf[:0]
			}
		}
		for x := 0; x < s.cols; x++ {
			g := s.vt.Cell(x, y)
			if g.Mode&vt10x.AttrWideDummy != 0 {
				continue
			}
			a := int(g.Mode) & drawnAttrs
			if g.FG != fg || g.BG != bg || a != attr {
				flush()
				fg, bg, attr = g.FG, g.BG, a
			}
			ch := g.Char
			if ch == 0 {
				ch = ' '
			}
			buf = append(buf, ch)
		}
		flush()
		f.Lines[y] = trimRuns(line)
	}
	return f, s.rev
}

// trimRuns drops trailing blanks drawn in default colours: most rows are
// short, and the page pads nothing.
func trimRuns(line []Run) []Run {
	for len(line) > 0 {
		r := &line[len(line)-1]
		if r.BG != "" {
			break
		}
		t := []rune(r.Text)
		n := len(t)
		for n > 0 && t[n-1] == ' ' {
			n--
		}
		if n > 0 {
			r.Text = string(t[:n])
			break
		}
		line = line[:len(line)-1]
	}
	return line
}

// xterm's 16 colours, as its default palette draws them.
var ansi16 = [16]string{
	"#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
	"#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
}

// cssColor maps a vt10x colour to CSS: the 16 ANSI colours, the xterm 256
// cube and greys, 24-bit colours (vt10x keeps those as r<<16|g<<8|b), and
// the defaults as "" (the page's own). Reverse video has already swapped
// the two, so a default may stand on the other side: bgSide says which.
func cssColor(c vt10x.Color, bgSide bool) string {
	switch {
	case c == vt10x.DefaultFG:
		if bgSide {
			return "var(--fg)"
		}
		return ""
	case c == vt10x.DefaultBG:
		if bgSide {
			return ""
		}
		return "var(--bg)"
	case c >= 1<<24:
		return ""
	case c < 16:
		return ansi16[c]
	case c < 232:
		n := int(c) - 16
		level := func(v int) int {
			if v == 0 {
				return 0
			}
			return 55 + 40*v
		}
		return fmt.Sprintf("#%02x%02x%02x", level(n/36), level(n/6%6), level(n%6))
	case c < 256:
		v := 8 + 10*(int(c)-232)
		return fmt.Sprintf("#%02x%02x%02x", v, v, v)
	default:
		return fmt.Sprintf("#%06x", uint32(c))
	}
}

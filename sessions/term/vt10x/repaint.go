package vt10x

import "strconv"

// AppendRepaint appends bytes that draw this terminal, as it is, on a
// blank terminal of the same size: with history set, the scrollback first
// (it scrolls into the viewer's own), then the main screen, then the
// alternate screen if it is in use; colours and attributes; the scroll
// region, the cursor, its visibility and the input modes a viewer's keys
// depend on (application cursor keys and keypad, mouse reporting, focus
// events). The pen is left at the default.
func (t *State) AppendRepaint(buf []byte, history bool) []byte {
	buf = append(buf, "\x1b[0m\x1b[?25l\x1b[r\x1b[H\x1b[2J"...)
	alt := t.mode&ModeAltScreen != 0
	main := t.lines
	if alt {
		main = t.altLines
	}
	if history {
		for i := 0; i < t.sb.n; i++ {
			buf = append(t.AppendScrollback(buf, i, false), "\r\n"...)
		}
	}
	for y, l := range main {
		if y > 0 {
			buf = append(buf, "\r\n"...)
		}
		buf = appendANSI(buf, l)
	}
	if alt {
		buf = append(buf, "\x1b[?1049h\x1b[H\x1b[2J"...)
		for y, l := range t.lines {
			if last := l.lastDrawn(); last >= 0 {
				buf = appendCUP(buf, y, 0)
				buf = appendANSI(buf, l)
			}
		}
	}
	if t.top != 0 || t.bottom != t.rows-1 {
		buf = strconv.AppendInt(append(buf, "\x1b["...), int64(t.top+1), 10)
		buf = strconv.AppendInt(append(buf, ';'), int64(t.bottom+1), 10)
		buf = append(buf, 'r')
	}
	for _, m := range [...]struct {
		flag ModeFlag
		set  string
	}{
		{ModeAppCursor, "\x1b[?1h"}, {ModeAppKeypad, "\x1b="}, {ModeMouseX10, "\x1b[?9h"},
		{ModeMouseButton, "\x1b[?1000h"}, {ModeMouseMotion, "\x1b[?1002h"}, {ModeMouseMany, "\x1b[?1003h"},
		{ModeMouseSgr, "\x1b[?1006h"}, {ModeFocus, "\x1b[?1004h"},
	} {
		if t.mode&m.flag != 0 {
			buf = append(buf, m.set...)
		}
	}
	buf = appendCUP(buf, t.cur.Y, t.cur.X)
	if t.mode&ModeHide == 0 {
		buf = append(buf, "\x1b[?25h"...)
	}
	return buf
}

func appendCUP(buf []byte, y, x int) []byte {
	buf = strconv.AppendInt(append(buf, "\x1b["...), int64(y+1), 10)
	buf = strconv.AppendInt(append(buf, ';'), int64(x+1), 10)
	return append(buf, 'H')
}

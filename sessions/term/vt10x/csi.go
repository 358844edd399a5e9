package vt10x

import (
	"fmt"
)

// maxArg bounds a CSI parameter: no screen is larger, and some operations
// repeat once per unit of their count (tab forward, tab back), so a
// count of a billion would hang the terminal.
const maxArg = 9999

// CSI (Control Sequence Introducer)
// ESC+[
type csiEscape struct {
	buf  [256]byte
	n    int
	argv [128]int
	args []int
	mode byte
	priv bool
	// skip is set for a sequence this terminal must not act on: one with
	// a private prefix other than '?' (>, <, =: xterm and kitty
	// extensions), intermediate bytes (e.g. DECRQM's $, DECSCUSR's
	// space) or a signed number. Upstream ran them as the plain sequence
	// with the same final byte: `CSI > 4;1 m` reset the colours,
	// `CSI -5 C` indexed a row with a negative number.
	skip bool
}

func (c *csiEscape) reset() {
	c.n = 0
	c.args = c.argv[:0]
	c.mode = 0
	c.priv = false
	c.skip = false
}

func (c *csiEscape) put(b byte) bool {
	if c.n < len(c.buf) {
		c.buf[c.n] = b
		c.n++
	}
	if b >= 0x40 && b <= 0x7E || c.n >= len(c.buf) {
		c.parse()
		return true
	}
	return false
}

// parse reads the parameters as upstream did (numbers separated by ';',
// stopping at the first that is not a number), without allocating.
func (c *csiEscape) parse() {
	buf := c.buf[:c.n]
	c.mode = buf[len(buf)-1]
	if len(buf) == 1 {
		return
	}
	c.args = c.argv[:0]
	s := buf[:len(buf)-1]
	switch s[0] {
	case '?':
		c.priv = true
		s = s[1:]
	case '<', '=', '>':
		c.skip = true
		return
	}
	for _, b := range s {
		if b >= 0x20 && b <= 0x2f {
			c.skip = true // an intermediate byte, or a sign
			return
		}
	}
	for len(s) > 0 || len(c.args) == 0 {
		v, ok, rest := 0, false, s
		for len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
			v = min(v*10+int(rest[0]-'0'), maxArg)
			rest = rest[1:]
			ok = true
		}
		if !ok || (len(rest) > 0 && rest[0] != ';') {
			break // not a number: upstream's Atoi failed here
		}
		if len(c.args) == len(c.argv) {
			break
		}
		c.args = append(c.args, v)
		if len(rest) == 0 {
			break
		}
		s = rest[1:]
		if len(s) == 0 {
			break // a trailing ';': upstream's last, empty, field
		}
	}
}

func (c *csiEscape) arg(i, def int) int {
	if i >= len(c.args) || i < 0 {
		return def
	}
	if c.args[i] == 0 && def == 1 {
		// A count of 0 is the default count, 1, as in xterm. Upstream
		// took it literally, and its erase and scroll operations then
		// cleared a row or a cell they were given no count for.
		return 1
	}
	return c.args[i]
}

// maxarg takes the maximum of arg(i, def) and def
func (c *csiEscape) maxarg(i, def int) int {
	return max(c.arg(i, def), def)
}

func (t *State) handleCSI() {
	c := &t.csi
	if c.skip {
		return
	}
	switch c.mode {
	default:
		goto unknown
	case '@': // ICH - insert <n> blank char
		t.insertBlanks(c.arg(0, 1))
	case 'A': // CUU - cursor <n> up
		t.moveTo(t.cur.X, t.cur.Y-c.maxarg(0, 1))
	case 'B', 'e': // CUD, VPR - cursor <n> down
		t.moveTo(t.cur.X, t.cur.Y+c.maxarg(0, 1))
	case 'c': // DA - device attributes
		if c.arg(0, 0) == 0 {
			// TODO: write vt102 id
		}
	case 'C', 'a': // CUF, HPR - cursor <n> forward
		t.moveTo(t.cur.X+c.maxarg(0, 1), t.cur.Y)
	case 'D': // CUB - cursor <n> backward
		t.moveTo(t.cur.X-c.maxarg(0, 1), t.cur.Y)
	case 'E': // CNL - cursor <n> down and first col
		t.moveTo(0, t.cur.Y+c.arg(0, 1))
	case 'F': // CPL - cursor <n> up and first col
		t.moveTo(0, t.cur.Y-c.arg(0, 1))
	case 'g': // TBC - tabulation clear
		switch c.arg(0, 0) {
		// clear current tab stop
		case 0:
			t.tabs[t.cur.X] = false
		// clear all tabs
		case 3:
			for i := range t.tabs {
				t.tabs[i] = false
			}
		default:
			goto unknown
		}
	case 'G', '`': // CHA, HPA - Move to <col>
		t.moveTo(c.arg(0, 1)-1, t.cur.Y)
	case 'H', 'f': // CUP, HVP - move to <row> <col>
		t.moveAbsTo(c.arg(1, 1)-1, c.arg(0, 1)-1)
	case 'I': // CHT - cursor forward tabulation <n> tab stops
		n := c.arg(0, 1)
		for i := 0; i < n; i++ {
			t.putTab(true)
		}
	case 'J': // ED - clear screen
		// TODO: sel.ob.x = -1
		switch c.arg(0, 0) {
		case 0: // below
			t.clear(t.cur.X, t.cur.Y, t.cols-1, t.cur.Y)
			if t.cur.Y < t.rows-1 {
				t.clear(0, t.cur.Y+1, t.cols-1, t.rows-1)
			}
		case 1: // above
			if t.cur.Y > 1 {
				t.clear(0, 0, t.cols-1, t.cur.Y-1)
			}
			t.clear(0, t.cur.Y, t.cur.X, t.cur.Y)
		case 2: // all
			t.clear(0, 0, t.cols-1, t.rows-1)
		default:
			goto unknown
		}
	case 'K': // EL - clear line
		switch c.arg(0, 0) {
		case 0: // right
			t.clear(t.cur.X, t.cur.Y, t.cols-1, t.cur.Y)
		case 1: // left
			t.clear(0, t.cur.Y, t.cur.X, t.cur.Y)
		case 2: // all
			t.clear(0, t.cur.Y, t.cols-1, t.cur.Y)
		}
	case 'S': // SU - scroll <n> lines up
		t.scrollUp(t.top, c.arg(0, 1))
	case 'T': // SD - scroll <n> lines down
		t.scrollDown(t.top, c.arg(0, 1))
	case 'L': // IL - insert <n> blank lines
		t.insertBlankLines(c.arg(0, 1))
	case 'l': // RM - reset mode
		t.setMode(c.priv, false, c.args)
	case 'M': // DL - delete <n> lines
		t.deleteLines(c.arg(0, 1))
	case 'X': // ECH - erase <n> chars
		t.clear(t.cur.X, t.cur.Y, t.cur.X+c.arg(0, 1)-1, t.cur.Y)
	case 'P': // DCH - delete <n> chars
		t.deleteChars(c.arg(0, 1))
	case 'Z': // CBT - cursor backward tabulation <n> tab stops
		n := c.arg(0, 1)
		for i := 0; i < n; i++ {
			t.putTab(false)
		}
	case 'd': // VPA - move to <row>
		t.moveAbsTo(t.cur.X, c.arg(0, 1)-1)
	case 'h': // SM - set terminal mode
		t.setMode(c.priv, true, c.args)
	case 'm': // SGR - terminal attribute (color)
		t.setAttr(c.args)
	case 'n':
		switch c.arg(0, 0) {
		case 5: // DSR - device status report
			t.w.Write([]byte("\033[0n"))
		case 6: // CPR - cursor position report
			t.w.Write([]byte(fmt.Sprintf("\033[%d;%dR", t.cur.Y+1, t.cur.X+1)))
		}
	case 'r': // DECSTBM - set scrolling region
		if c.priv {
			goto unknown
		} else {
			t.setScroll(c.arg(0, 1)-1, c.arg(1, t.rows)-1)
			t.moveAbsTo(0, 0)
		}
	case 's': // DECSC - save cursor position (ANSI.SYS)
		if !c.priv {
			t.saveCursor()
		}
	case 'u': // DECRC - restore cursor position (ANSI.SYS)
		// `CSI ? u` is the kitty keyboard protocol's query, which
		// upstream took for a restore.
		if !c.priv {
			t.restoreCursor()
		}
	}
	return
unknown: // TODO: get rid of this goto
	t.logf("unknown CSI sequence '%c'\n", c.mode)
	// TODO: c.dump()
}

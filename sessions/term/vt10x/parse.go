package vt10x

import "unicode/utf8"

// parseState is where the parser is in an escape sequence. Upstream kept
// it as a method value (t.state = t.parse), which allocates a closure on
// every change of state, that is twice per escape sequence.
type parseState uint8

const (
	stGround parseState = iota
	stEsc
	stCSI
	stStr
	stStrEnd
	stAltCharset
	stEscTest
	stSkipOne // the designator after ESC ) * + SP %, which upstream printed
)

const utf8Max = utf8.UTFMax

func isControlCode(c rune) bool {
	return c < 0x20 || c == 0177
}

// write parses p. A rune split across writes is held until the rest of it
// comes (upstream dropped both halves).
func (t *State) write(p []byte) {
	if t.npartial > 0 {
		p = t.completePartial(p)
	}
	for i := 0; i < len(p); {
		b := p[i]
		if b >= 0x20 && b < 0x7f && t.state == stGround && t.cur.Attr.Mode&attrGfx == 0 {
			j := i + 1
			for j < len(p) && p[j] >= 0x20 && p[j] < 0x7f {
				j++
			}
			t.putASCII(p[i:j])
			i = j
			continue
		}
		if b == 0x1b && t.state == stGround {
			if n := t.fastCSI(p[i:]); n > 0 {
				i += n
				continue
			}
		}
		if b == '\n' && t.state == stGround {
			t.newline(t.mode&ModeCRLF != 0) // handleControlCodes, without the dispatch
			i++
			continue
		}
		if b < utf8.RuneSelf {
			t.put(rune(b))
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size == 1 {
			if !utf8.FullRune(p[i:]) {
				t.npartial = copy(t.partial[:], p[i:])
				return
			}
			t.logln("invalid utf8 sequence")
			i++
			continue
		}
		t.put(r)
		i += size
	}
}

// fastCSI runs the CSI sequence at the start of p when all of it is there
// and it holds only parameter bytes (digits, ';', ':', a prefix) before its
// final byte, which is what nearly every sequence an agent writes is. It
// returns the bytes it took, or 0 to leave p to the byte-at-a-time parser
// (a sequence cut off by the end of p, or one with control codes or
// intermediate bytes in it).
func (t *State) fastCSI(p []byte) int {
	if len(p) < 3 || p[1] != '[' {
		return 0
	}
	j := 2
	for j < len(p) && p[j] >= 0x30 && p[j] <= 0x3f {
		j++
	}
	if j == len(p) || p[j] < 0x40 || p[j] > 0x7e || j-2 >= len(t.csi.buf) {
		return 0
	}
	t.csi.reset()
	t.csi.n = copy(t.csi.buf[:], p[2:j+1])
	t.csi.parse()
	t.handleCSI()
	return j + 1
}

// completePartial finishes the rune held from the last write with the
// first bytes of p and returns what is left of p.
func (t *State) completePartial(p []byte) []byte {
	var tmp [2 * utf8Max]byte
	n := copy(tmp[:], t.partial[:t.npartial])
	k := copy(tmp[n:n+utf8Max], p)
	if !utf8.FullRune(tmp[:n+k]) {
		t.npartial = copy(t.partial[:], tmp[:n+k])
		return nil
	}
	t.npartial = 0
	r, size := utf8.DecodeRune(tmp[:n+k])
	if r == utf8.RuneError && size == 1 {
		// What was held is no rune: drop it, as upstream drops each
		// invalid byte.
		t.logln("invalid utf8 sequence")
		return p
	}
	t.put(r)
	return p[size-n:]
}

func (t *State) put(c rune) {
	switch t.state {
	case stGround:
		t.parse(c)
	case stEsc:
		t.parseEsc(c)
	case stCSI:
		t.parseEscCSI(c)
	case stStr:
		t.parseEscStr(c)
	case stStrEnd:
		t.parseEscStrEnd(c)
	case stAltCharset:
		t.parseEscAltCharset(c)
	case stEscTest:
		t.parseEscTest(c)
	case stSkipOne:
		if !t.handleControlCodes(c) {
			t.state = stGround
		}
	}
}

// putASCII writes a run of printable ASCII (0x20-0x7e) in the ground state,
// outside the line-drawing charset: what parse does for each of them, a
// row's worth at a time.
func (t *State) putASCII(s []byte) {
	p := t.pen()
	t.changed |= ChangedScreen
	for len(s) > 0 {
		if t.cur.State&cursorWrapNext != 0 {
			if t.mode&ModeWrap == 0 {
				// No autowrap: every character lands on the last column.
				t.setChar(rune(s[len(s)-1]), &t.cur.Attr, t.cur.X, t.cur.Y)
				return
			}
			t.markWrap()
			t.newline(true)
		}
		x, y := t.cur.X, t.cur.Y
		n := min(len(s), t.cols-x)
		t.unsplit(x, x+n, y)
		dst := t.lines[y][x : x+n]
		for i, b := range s[:n] {
			dst[i] = cell{ch: p.ch | uint32(b), fg: p.fg, bg: p.bg}
		}
		t.lines[y].mark(x, x+n)
		t.dirty[y] = true
		s = s[n:]
		if x+n < t.cols {
			t.cur.X = x + n
		} else {
			t.cur.X = t.cols - 1
			t.cur.State |= cursorWrapNext
		}
	}
}

func (t *State) parse(c rune) {
	if isControlCode(c) {
		if t.handleControlCodes(c) || t.cur.Attr.Mode&attrGfx == 0 {
			return
		}
	}
	w := 1
	if c >= 0x300 {
		w = RuneWidth(c)
	}
	if w == 0 {
		// A combining mark, a joiner or a variation selector takes no
		// cell of its own (upstream gave it one). U+FE0F asks for the
		// emoji form of the glyph before it, which is two cells wide.
		if c == 0xFE0F {
			t.widenPrevious()
		}
		return
	}
	// TODO: update selection; see st.c:2450

	if t.mode&ModeWrap != 0 && t.cur.State&cursorWrapNext != 0 {
		t.markWrap()
		t.newline(true)
	}

	if t.mode&ModeInsert != 0 && t.cur.X+1 < t.cols {
		// TODO: move shiz, look at st.c:2458
		t.logln("insert mode not implemented")
	}

	if w == 2 {
		switch {
		case t.cols < 2:
			w = 1
		case t.cur.X == t.cols-1 && t.mode&ModeWrap != 0:
			// No room on this row: the glyph goes to the next one.
			t.markWrap()
			t.newline(true)
		case t.cur.X == t.cols-1:
			t.cur.X--
		}
	}
	t.setChar(c, &t.cur.Attr, t.cur.X, t.cur.Y)
	if w == 2 {
		t.setWide(t.cur.X, t.cur.Y)
	}
	if t.cur.X+w < t.cols {
		t.moveTo(t.cur.X+w, t.cur.Y)
	} else {
		t.cur.X = t.cols - 1
		t.cur.State |= cursorWrapNext
	}
}

// markWrap marks the cursor's cell as the end of a row that wrapped.
func (t *State) markWrap() {
	l := t.lines[t.cur.Y]
	l[t.cur.X].ch |= attrWrap << runeBits
	l.mark(t.cur.X, t.cur.X+1)
}

// setWide makes the glyph at x two cells wide: it is marked AttrWide and
// the cell after it becomes its AttrWideDummy half.
func (t *State) setWide(x, y int) {
	l := t.lines[y]
	t.unsplit(x+1, x+2, y)
	l[x].ch |= attrWide << runeBits
	l[x+1] = cell{ch: ' ' | uint32(uint16(l[x].mode()&^attrWide|attrWideDummy))<<runeBits, fg: l[x].fg, bg: l[x].bg}
	l.mark(x, x+2)
}

// widenPrevious gives the glyph just written a second cell, when it has
// room for one.
func (t *State) widenPrevious() {
	if t.cur.State&cursorWrapNext != 0 || t.cur.X == 0 {
		return // at the right edge, or nothing before it on this row
	}
	x, y := t.cur.X-1, t.cur.Y
	prev := t.lines[y][x]
	if prev.mode()&(attrWide|attrWideDummy) != 0 || prev.char() < 0x80 {
		return
	}
	t.setWide(x, y)
	t.dirty[y] = true
	if x+2 < t.cols {
		t.moveTo(x+2, y)
	} else {
		t.cur.State |= cursorWrapNext
	}
}

func (t *State) parseEsc(c rune) {
	if t.handleControlCodes(c) {
		return
	}
	next := stGround
	switch c {
	case '[':
		next = stCSI
	case '#':
		next = stEscTest
	case 'P', // DCS - Device Control String
		'_', // APC - Application Program Command
		'^', // PM - Privacy Message
		']', // OSC - Operating System Command
		'k': // old title set compatibility
		t.str.reset()
		t.str.typ = c
		next = stStr
	case '(': // set primary charset G0
		next = stAltCharset
	case ')', // set secondary charset G1 (ignored)
		'*', // set tertiary charset G2 (ignored)
		'+', // set quaternary charset G3 (ignored)
		' ', // ANSI conformance level, 7/8-bit controls (ignored)
		'%': // character set coding, e.g. UTF-8 (ignored)
		next = stSkipOne
	case 'D': // IND - linefeed
		if t.cur.Y == t.bottom {
			t.scrollUp(t.top, 1)
		} else {
			t.moveTo(t.cur.X, t.cur.Y+1)
		}
	case 'E': // NEL - next line
		t.newline(true)
	case 'H': // HTS - horizontal tab stop
		t.tabs[t.cur.X] = true
	case 'M': // RI - reverse index
		if t.cur.Y == t.top {
			t.scrollDown(t.top, 1)
		} else {
			t.moveTo(t.cur.X, t.cur.Y-1)
		}
	case 'Z': // DECID - identify terminal
		// TODO: write to our writer our id
	case 'c': // RIS - reset to initial state
		t.reset()
	case '=': // DECPAM - application keypad
		t.mode |= ModeAppKeypad
	case '>': // DECPNM - normal keypad
		t.mode &^= ModeAppKeypad
	case '7': // DECSC - save cursor
		t.saveCursor()
	case '8': // DECRC - restore cursor
		t.restoreCursor()
	case '\\': // ST - stop
	default:
		t.logf("unknown ESC sequence '%c'\n", c)
	}
	t.state = next
}

func (t *State) parseEscCSI(c rune) {
	if t.handleControlCodes(c) {
		return
	}
	if t.csi.put(byte(c)) {
		t.state = stGround
		t.handleCSI()
	}
}

func (t *State) parseEscStr(c rune) {
	switch c {
	case '\033':
		t.state = stStrEnd
	case '\a': // backwards compatiblity to xterm
		t.state = stGround
		t.handleSTR()
	default:
		t.str.put(c)
	}
}

func (t *State) parseEscStrEnd(c rune) {
	if t.handleControlCodes(c) {
		return
	}
	t.state = stGround
	if c == '\\' {
		t.handleSTR()
	}
}

func (t *State) parseEscAltCharset(c rune) {
	if t.handleControlCodes(c) {
		return
	}
	switch c {
	case '0': // line drawing set
		t.cur.Attr.Mode |= attrGfx
	case 'B': // USASCII
		t.cur.Attr.Mode &^= attrGfx
	case 'A', // UK (ignored)
		'<', // multinational (ignored)
		'5', // Finnish (ignored)
		'C', // Finnish (ignored)
		'K': // German (ignored)
	default:
		t.logf("unknown alt. charset '%c'\n", c)
	}
	t.state = stGround
}

func (t *State) parseEscTest(c rune) {
	if t.handleControlCodes(c) {
		return
	}
	// DEC screen alignment test
	if c == '8' {
		for y := 0; y < t.rows; y++ {
			for x := 0; x < t.cols; x++ {
				t.setChar('E', &t.cur.Attr, x, y)
			}
		}
	}
	t.state = stGround
}

func (t *State) handleControlCodes(c rune) bool {
	if !isControlCode(c) {
		return false
	}
	switch c {
	// HT
	case '\t':
		t.putTab(true)
	// BS
	case '\b':
		t.moveTo(t.cur.X-1, t.cur.Y)
	// CR
	case '\r':
		t.moveTo(0, t.cur.Y)
	// LF, VT, LF
	case '\f', '\v', '\n':
		// go to first col if mode is set
		t.newline(t.mode&ModeCRLF != 0)
	// BEL
	case '\a':
		// TODO: emit sound
		// TODO: window alert if not focused
	// ESC
	case 033:
		t.csi.reset()
		t.state = stEsc
	// SO, SI
	case 016, 017:
		// different charsets not supported. apps should use the correct
		// alt charset escapes, probably for line drawing
	// SUB, CAN
	case 032, 030:
		// They abort the sequence they interrupt (upstream kept parsing
		// it, so the bytes after it were read as its parameters).
		t.csi.reset()
		t.state = stGround
	// ignore ENQ, NUL, XON, XOFF, DEL
	case 005, 000, 021, 023, 0177:
	default:
		return false
	}
	return true
}

package vt10x

import (
	"slices"
	"unicode/utf8"
)

// scrollback keeps the lines that scroll off the top of the main screen,
// up to limit bytes, the oldest dropped first. A line is kept as its text
// and the runs of attributes over it, not as cells: a line of 40
// characters costs about 40 bytes, not 1.4 KB. Lines are recycled, so a
// full scrollback takes in a line without allocating.
type scrollback struct {
	limit int  // bytes; 0 keeps nothing
	off   bool // set while lines are deleted rather than scrolled off
	ring  []sbLine
	start int // index of the oldest line in ring
	n     int // lines held
	size  int // bytes held, by sbLine.cost
}

type sbLine struct {
	indent int     // blanks before text
	text   []byte  // the glyphs' UTF-8 after them, trailing blanks cut (wide dummies left out)
	runs   []sbRun // the attributes, from the glyph (counting the indent) each run starts at
}

// sbRun is a change of attributes at glyph `at` of a line.
type sbRun struct {
	at     uint16
	mode   int16
	fg, bg Color
}

// lineOverhead is what a kept line costs besides its text and runs: its
// slice headers in the ring.
const lineOverhead = 48

func (l *sbLine) cost() int { return lineOverhead + cap(l.text) + 12*cap(l.runs) }

func (s *scrollback) setLimit(n int) {
	s.limit = max(n, 0)
	for s.n > 0 && s.size > s.limit {
		s.dropOldest()
	}
}

// at is line i, 0 the oldest. The ring's length is a power of two.
func (s *scrollback) at(i int) *sbLine { return &s.ring[(s.start+i)&(len(s.ring)-1)] }

func (s *scrollback) dropOldest() *sbLine {
	old := s.at(0)
	s.size -= old.cost()
	s.start = (s.start + 1) & (len(s.ring) - 1)
	s.n--
	return old
}

// push copies l into the scrollback.
func (s *scrollback) push(l line) {
	if s.limit == 0 || s.off {
		return
	}
	var slot sbLine
	for s.n > 0 && s.size+lineOverhead+len(l) > s.limit {
		// Recycle the oldest line's buffers for this one.
		old := s.dropOldest()
		if cap(old.text) > cap(slot.text) {
			slot.text = old.text
		}
		if cap(old.runs) > cap(slot.runs) {
			slot.runs = old.runs
		}
		*old = sbLine{}
	}
	encode(&slot, l)
	if s.n == len(s.ring) {
		s.grow()
	}
	*s.at(s.n) = slot
	s.n++
	s.size += slot.cost()
	for s.n > 1 && s.size > s.limit {
		s.dropOldest()
	}
}

func (s *scrollback) grow() {
	ring := make([]sbLine, max(16, 2*len(s.ring)))
	for i := 0; i < s.n; i++ {
		ring[i] = *s.at(i)
	}
	s.ring, s.start = ring, 0
}

// encode writes l's glyphs into dst's buffers.
func encode(dst *sbLine, l line) {
	last := l.lastDrawn()
	text := slices.Grow(dst.text[:0], last+1)
	runs := dst.runs[:0]
	plain := true // the pen is the default one
	pen := defaultBlank
	lo, _ := l.span()
	start := min(lo, last+1)
	dst.indent = start // the blanks before the span
	glyph := start
	for x := start; x <= last; x++ {
		c := l[x]
		if plain && c.ch < utf8.RuneSelf && c.fg == DefaultFG && c.bg == DefaultBG {
			// ASCII in the default colours, no attributes: most of it.
			if c.ch < ' ' {
				c.ch = ' '
			}
			text = append(text, byte(c.ch))
			glyph++
			continue
		}
		m := c.mode()
		if x > 0 && isPair(l, x-1) { // the second half of a wide glyph
			continue
		}
		if !sameLook(c, pen) {
			runs = append(runs, sbRun{at: uint16(glyph), mode: m &^ (attrReverse | attrWrap | attrWide | attrWideDummy | attrGfx), fg: c.fg, bg: c.bg})
			pen = c
			plain = sameLook(c, defaultBlank)
		}
		r := c.char()
		if r == 0 {
			r = ' '
		}
		text = utf8.AppendRune(text, r)
		glyph++
	}
	dst.text, dst.runs = text, runs
}

// Scrollback is the number of lines kept above the main screen.
func (t *State) Scrollback() int { return t.sb.n }

// AppendScrollback appends scrollback line i (0 is the oldest): its text
// and SGR sequences, or with plain set its text alone.
func (t *State) AppendScrollback(buf []byte, i int, plain bool) []byte {
	if i < 0 || i >= t.sb.n {
		return buf
	}
	l := t.sb.at(i)
	buf = appendSpaces(buf, l.indent)
	if plain || len(l.runs) == 0 {
		return append(buf, l.text...)
	}
	text, glyph, run := l.text, l.indent, 0
	styled := false
	for len(text) > 0 {
		for run < len(l.runs) && int(l.runs[run].at) == glyph {
			r := l.runs[run]
			c := cell{ch: uint32(uint16(r.mode)) << runeBits, fg: r.fg, bg: r.bg}
			buf = appendSGR(buf, c)
			styled = !isDefaultPen(c)
			run++
		}
		_, size := utf8.DecodeRune(text)
		buf = append(buf, text[:size]...)
		text = text[size:]
		glyph++
	}
	if styled {
		buf = append(buf, "\x1b[0m"...)
	}
	return buf
}

package vt10x

import (
	"strconv"
	"unicode/utf8"
)

// Style bits of a glyph, one byte per glyph from AppendStyles: what a
// person sees of a cell besides its text. A menu that marks its selected
// row only by colour shows up here.
const (
	StyleReverse    = 1 << iota // drawn in reverse video (SGR 7)
	StyleBackground             // a background other than the default (reverse video included)
	StyleForeground             // a foreground other than the default
	StyleBold
	StyleUnderline
	StyleItalic
)

// last returns the index of the last cell of l that is not blank, or -1.
// Only cells before the extent can be.
func (l line) last() int {
	lo, hi := l.span()
	x := min(hi, len(l)) - 1
	for ; x >= lo; x-- {
		if r := l[x].char(); r != ' ' && r != 0 {
			return x
		}
	}
	return -1
}

func appendText(buf []byte, l line) []byte {
	last := l.last()
	lo, _ := l.span()
	start := min(lo, last+1)
	buf = appendSpaces(buf, start)
	for x := start; x <= last; x++ {
		c := l[x]
		if c.ch < utf8.RuneSelf && c.ch >= ' ' {
			buf = append(buf, byte(c.ch)) // ASCII in no attributes
			continue
		}
		if x > 0 && isPair(l, x-1) { // the second half of a wide glyph
			continue
		}
		r := c.char()
		if r == 0 {
			r = ' '
		}
		buf = utf8.AppendRune(buf, r)
	}
	return buf
}

// look is how a cell appears: the colours it was asked for and whether it
// shows them swapped. A printed cell holds its colours as drawn (reverse
// video already swapped, bold already brightened); an erased one keeps the
// pen's reverse bit without the swap (upstream's erase), so it shows
// unreversed. A blank with the bit is taken as reversed only when its
// colours say so (a default colour on the wrong side).
func look(c cell) (fg, bg Color, reverse bool) {
	if c.mode()&attrReverse != 0 {
		if r := c.char(); (r != ' ' && r != 0) || c.fg == DefaultBG || c.bg == DefaultFG {
			return c.bg, c.fg, true
		}
	}
	return c.fg, c.bg, false
}

// sameLook reports whether c drawn with pen looks as c does (its rune
// aside): the same colours and attributes, or for a blank the same
// background, reverse video and underline (the rest does not show).
func sameLook(c, pen cell) bool {
	const ignored = attrReverse | attrWrap | attrWide | attrWideDummy | attrGfx
	fc, bc, rc := look(c)
	fp, bp, rp := look(pen)
	if bc != bp || rc != rp {
		return false
	}
	if r := c.char(); r == ' ' || r == 0 {
		return (c.mode()^pen.mode())&attrUnderline == 0
	}
	return fc == fp && (c.mode()^pen.mode())&^ignored == 0
}

func styleOf(c cell) byte {
	var s byte
	m := c.mode()
	fg, bg, reverse := look(c)
	if reverse {
		s |= StyleReverse | StyleBackground
	}
	if bg != DefaultBG {
		s |= StyleBackground
	}
	if fg != DefaultFG {
		s |= StyleForeground
	}
	if m&attrBold != 0 {
		s |= StyleBold
	}
	if m&attrUnderline != 0 {
		s |= StyleUnderline
	}
	if m&attrItalic != 0 {
		s |= StyleItalic
	}
	return s
}

func appendStyles(buf []byte, l line) []byte {
	last := l.last()
	lo, _ := l.span()
	start := min(lo, last+1)
	buf = appendZeros(buf, start)
	for x := start; x <= last; x++ {
		c := l[x]
		if x > 0 && isPair(l, x-1) { // the second half of a wide glyph
			continue
		}
		buf = append(buf, styleOf(c))
	}
	return buf
}

// lastDrawn is last, counting a blank cell with a background or reverse
// video as drawn: it shows.
func (l line) lastDrawn() int {
	lo, hi := l.span()
	for x := min(hi, len(l)) - 1; x >= lo; x-- {
		c := l[x]
		if r := c.char(); r != ' ' && r != 0 {
			return x
		}
		if _, bg, reverse := look(c); bg != DefaultBG || reverse || c.mode()&attrUnderline != 0 {
			return x
		}
	}
	return -1
}

func appendANSI(buf []byte, l line) []byte {
	last := l.lastDrawn()
	pen := defaultBlank
	for x := 0; x <= last; x++ {
		c := l[x]
		if x > 0 && isPair(l, x-1) { // the second half of a wide glyph
			continue
		}
		if !sameLook(c, pen) {
			buf = appendSGR(buf, c)
			pen = c
		}
		r := c.char()
		if r == 0 {
			r = ' '
		}
		buf = utf8.AppendRune(buf, r)
	}
	if !isDefaultPen(pen) {
		buf = append(buf, "\x1b[0m"...)
	}
	return buf
}

// isDefaultPen reports whether drawing c leaves a terminal's pen as it
// starts: no colours, no attributes.
func isDefaultPen(c cell) bool {
	return c.fg == DefaultFG && c.bg == DefaultBG && c.mode()&^(attrWrap|attrWide|attrWideDummy|attrGfx) == 0
}

// appendSGR sets a default terminal's pen to draw c as it looks (see
// look): a cell showing swapped colours is written as the colours asked
// for plus SGR 7.
func appendSGR(buf []byte, c cell) []byte {
	m := c.mode() &^ attrReverse
	fg, bg, reverse := look(c)
	if reverse {
		m |= attrReverse
	}
	buf = append(buf, "\x1b[0"...)
	for _, a := range [...]struct {
		bit  int16
		code string
	}{{attrBold, ";1"}, {attrItalic, ";3"}, {attrUnderline, ";4"}, {attrBlink, ";5"}, {attrReverse, ";7"}} {
		if m&a.bit != 0 {
			buf = append(buf, a.code...)
		}
	}
	buf = appendColor(buf, fg, 30, 90, 38, DefaultFG)
	buf = appendColor(buf, bg, 40, 100, 48, DefaultBG)
	return append(buf, 'm')
}

func appendColor(buf []byte, c Color, base, bright, ext int, def Color) []byte {
	switch {
	case c == def || c >= 1<<24:
		return buf
	case c < 8:
		return strconv.AppendInt(append(buf, ';'), int64(base)+int64(c), 10)
	case c < 16:
		return strconv.AppendInt(append(buf, ';'), int64(bright)+int64(c)-8, 10)
	case c < 256:
		buf = strconv.AppendInt(append(buf, ';'), int64(ext), 10)
		return strconv.AppendInt(append(buf, ";5;"...), int64(c), 10)
	}
	buf = strconv.AppendInt(append(buf, ';'), int64(ext), 10)
	buf = strconv.AppendInt(append(buf, ";2;"...), int64(c>>16&0xff), 10)
	buf = strconv.AppendInt(append(buf, ';'), int64(c>>8&0xff), 10)
	return strconv.AppendInt(append(buf, ';'), int64(c&0xff), 10)
}

// AppendText appends row y's text: trailing blanks cut, the second cell of
// each wide glyph left out.
func (t *State) AppendText(buf []byte, y int) []byte { return appendText(buf, t.lines[y]) }

// AppendStyles appends one Style byte per glyph of row y's text.
func (t *State) AppendStyles(buf []byte, y int) []byte { return appendStyles(buf, t.lines[y]) }

// AppendANSI appends row y as text and SGR sequences.
func (t *State) AppendANSI(buf []byte, y int) []byte { return appendANSI(buf, t.lines[y]) }

var (
	spaces [256]byte
	zeros  [256]byte
)

func init() {
	for i := range spaces {
		spaces[i] = ' '
	}
}

func appendSpaces(buf []byte, n int) []byte {
	for ; n > 0; n -= len(spaces) {
		buf = append(buf, spaces[:min(n, len(spaces))]...)
	}
	return buf
}

func appendZeros(buf []byte, n int) []byte {
	for ; n > 0; n -= len(zeros) {
		buf = append(buf, zeros[:min(n, len(zeros))]...)
	}
	return buf
}

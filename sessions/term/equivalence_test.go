package term

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/hinshun/vt10x"
	upstream "vt10x.upstream/pinned"

	"github.com/agentd/agentd/detect"
)

// The fork of vt10x (sessions/term/vt10x) must keep upstream's behaviour
// except where one of its patches fixes a bug on purpose. These tests feed
// the same bytes to the fork and to the pinned upstream and compare their
// whole state: every cell's rune, attributes and colours, the cursor (its
// position, pen and wrap state), the modes and the title.
//
// Upstream is fed through upstreamFeeder, which turns each deliberate fix
// into the bytes that make upstream do the same (agentd put most of these
// guards around upstream before the fork). Each rewrite there names the
// fork's patch it stands for; nothing else differs.

// upstreamFeeder writes a byte stream to upstream vt10x, rewriting what
// the fork deliberately does differently. It sees the whole stream at once,
// as upstream cannot take a rune split across writes.
type upstreamFeeder struct {
	vt  upstream.Terminal
	out []byte // rewritten bytes not yet written to vt
}

func (f *upstreamFeeder) flush() {
	if len(f.out) > 0 {
		f.vt.Write(f.out)
		f.out = f.out[:0]
	}
}

func (f *upstreamFeeder) feed(buf []byte) {
	cols, _ := f.vt.Size()
	for i := 0; i < len(buf); {
		c := buf[i]
		if c == 0x1b {
			i = f.escape(buf, i)
			continue
		}
		if c < utf8.RuneSelf {
			f.out = append(f.out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(buf[i:])
		if r == utf8.RuneError && size <= 1 {
			i++ // both drop an invalid byte
			continue
		}
		rb := buf[i : i+size]
		i += size
		switch vt10x.RuneWidth(r) {
		case 0:
			// Patch: a zero-width rune takes no cell. U+FE0F after a
			// narrow non-ASCII glyph makes it two cells wide (the emoji
			// form): upstream gets a space after the glyph.
			if r == 0xFE0F {
				f.flush()
				cur := f.vt.Cursor()
				if cur.State&2 == 0 && cur.X > 0 && f.vt.Cell(cur.X-1, cur.Y).Char >= 0x80 {
					f.out = append(f.out, ' ')
				}
			}
		case 2:
			// Patch: a wide glyph takes two cells and never straddles
			// the right edge. Upstream gets the glyph and a space.
			f.flush()
			cur := f.vt.Cursor()
			wrap := f.vt.Mode()&upstream.ModeWrap != 0
			if cols >= 2 && cur.X == cols-1 {
				switch {
				case cur.State&2 != 0 && wrap: // wrap pending: upstream wraps itself
				case wrap:
					f.out = append(f.out, "\r\n"...)
				default:
					f.out = append(f.out, "\x1b[D"...)
				}
			}
			f.out = append(f.out, rb...)
			if cols >= 2 {
				f.out = append(f.out, ' ')
			}
		default:
			f.out = append(f.out, rb...)
		}
	}
	f.flush()
}

// escape rewrites the escape sequence at buf[s] and returns where the
// bytes after it start.
func (f *upstreamFeeder) escape(buf []byte, s int) int {
	e, complete := seqEnd(buf, s)
	if !complete {
		f.out = append(f.out, buf[s:]...)
		return len(buf)
	}
	seq := buf[s:e]
	if len(seq) < 2 {
		f.out = append(f.out, seq...)
		return e
	}
	switch seq[1] {
	case 0x18, 0x1a:
		// Patch: CAN and SUB end the escape they interrupt.
		return e
	case ')', '*', '+', ' ', '%':
		// Patch: the designator after these is no character to print.
		// (A control code between them runs, and the designator is the
		// next byte that is none.)
		j := s + 2
		for j < len(buf) && (buf[j] < 0x20 || buf[j] == 0x7f) && buf[j] != 0x1b && buf[j] != 0x18 && buf[j] != 0x1a {
			f.out = append(f.out, buf[j])
			j++
		}
		if j < len(buf) && buf[j] != 0x1b && buf[j] != 0x18 && buf[j] != 0x1a {
			_, size := utf8.DecodeRune(buf[j:])
			j += size
		}
		return j
	case 'c':
		// Patch: a reset clears every column, not only the first `rows`.
		f.out = append(f.out, "\x1bc\x1b[2J"...)
		return e
	case '[':
		return f.csi(buf, s, e)
	}
	f.out = append(f.out, seq...)
	return e
}

func (f *upstreamFeeder) csi(buf []byte, s, e int) int {
	seq := buf[s:e]
	last := seq[len(seq)-1]
	if last < 0x40 && e < len(buf) && (buf[e] == 0x18 || buf[e] == 0x1a) {
		return e + 1 // Patch: CAN and SUB end the sequence (seqEnd stops at them)
	}
	if last < 0x40 || last > 0x7e {
		f.out = append(f.out, seq...)
		return e
	}
	// Control codes inside the sequence run where they are in both; run
	// them first here, so that the checks below see the sequence alone.
	var body []byte
	for _, c := range seq[2 : len(seq)-1] {
		if c < 0x20 || c == 0x7f {
			f.out = append(f.out, c)
		} else {
			body = append(body, c)
		}
	}
	final := seq[len(seq)-1]
	if len(body) > 0 {
		switch body[0] {
		case '<', '=', '>':
			return e // Patch: only '?' is a prefix upstream knows
		}
	}
	if bytes.IndexFunc(body, func(r rune) bool { return r >= 0x20 && r <= 0x2f }) >= 0 {
		return e // Patch: intermediate bytes and signs
	}
	priv := len(body) > 0 && body[0] == '?'
	if priv && (final == 's' || final == 'u') {
		return e // Patch: CSI ? u is kitty's query, not a restore
	}
	body = capCounts(body)
	if priv && (final == 'h' || final == 'l') {
		for _, m := range bytes.Split(body[1:], []byte(";")) {
			if string(m) != "1049" {
				continue
			}
			f.flush()
			alt := f.vt.Mode()&upstream.ModeAltScreen != 0
			switch {
			case final == 'h' && !alt:
				// Patch: ?1049h clears the alternate screen on the way in.
				f.out = append(append(append(f.out, "\x1b["...), body...), final)
				f.out = append(f.out, "\x1b[2J"...)
				f.flush()
				return e
			case final == 'l' && !alt:
				// Patch: ?1049l on the main screen only restores the cursor.
				f.out = append(f.out, "\x1b[?1048l"...)
				f.flush()
				return e
			}
		}
	}
	if !priv && bytes.IndexByte([]byte("@PXSTLMEFIZ"), final) >= 0 {
		// Patch: a count of 0 is a count of 1.
		first, rest, more := bytes.Cut(body, []byte(";"))
		if len(first) > 0 && len(bytes.Trim(first, "0")) == 0 {
			nb := []byte("1")
			if more {
				nb = append(append(nb, ';'), rest...)
			}
			body = nb
		}
	}
	f.out = append(append(append(f.out, "\x1b["...), body...), final)
	if final == 'h' || final == 'l' || final == 'r' {
		f.flush() // the next rewrite may ask about the mode or cursor
	}
	return e
}

// capCounts lowers every number above the fork's maxArg (9999) to it.
func capCounts(body []byte) []byte {
	var out []byte
	for i := 0; i < len(body); {
		if body[i] < '0' || body[i] > '9' {
			out = append(out, body[i])
			i++
			continue
		}
		j := i
		for j < len(body) && body[j] >= '0' && body[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(string(body[i:j]))
		if err != nil || n > 9999 {
			n = 9999
		}
		out = strconv.AppendInt(out, int64(n), 10)
		i = j
	}
	return out
}

// Mode bits the comparison leaves out: the fork's wide-glyph marks, and
// the wrap mark, which the fork also sets where a wide glyph moves to the
// next row.
const notCompared = vt10x.AttrWide | vt10x.AttrWideDummy | vt10x.AttrWrap

// diffState returns how fork and up differ, or "".
func diffState(fork vt10x.Terminal, up upstream.Terminal) string {
	fc, fr := fork.Size()
	uc, ur := up.Size()
	if fc != uc || fr != ur {
		return fmt.Sprintf("size %dx%d, upstream %dx%d", fc, fr, uc, ur)
	}
	for y := 0; y < fr; y++ {
		for x := 0; x < fc; x++ {
			a, b := fork.Cell(x, y), up.Cell(x, y)
			if a.Char == ' ' && a.Mode&(vt10x.AttrWide|vt10x.AttrWideDummy) == 0 && vt10x.RuneWidth(b.Char) == 2 && b.Char != ' ' {
				// Patch: writing over half of a wide glyph erases the
				// other half, as a terminal does; upstream kept it.
				continue
			}
			if a.Char != b.Char || uint32(a.FG) != uint32(b.FG) || uint32(a.BG) != uint32(b.BG) || a.Mode&^notCompared != b.Mode&^notCompared {
				return fmt.Sprintf("cell %d,%d: fork %q mode %#x fg %#x bg %#x, upstream %q mode %#x fg %#x bg %#x\nfork row:     %q\nupstream row: %q",
					x, y, a.Char, a.Mode, a.FG, a.BG, b.Char, b.Mode, b.FG, b.BG, rowOf(func(x int) rune { return fork.Cell(x, y).Char }, fc), rowOf(func(x int) rune { return up.Cell(x, y).Char }, fc))
			}
		}
	}
	a, b := fork.Cursor(), up.Cursor()
	if a.X != b.X || a.Y != b.Y || a.State != b.State || a.Attr.Mode != b.Attr.Mode || uint32(a.Attr.FG) != uint32(b.Attr.FG) || uint32(a.Attr.BG) != uint32(b.Attr.BG) {
		return fmt.Sprintf("cursor: fork %+v, upstream %+v", a, b)
	}
	if fork.Mode() != vt10x.ModeFlag(up.Mode()) {
		return fmt.Sprintf("modes: fork %#x, upstream %#x", fork.Mode(), up.Mode())
	}
	if fork.Title() != up.Title() || fork.CursorVisible() != up.CursorVisible() {
		return fmt.Sprintf("title %q/%q, cursor visible %v/%v", fork.Title(), up.Title(), fork.CursorVisible(), up.CursorVisible())
	}
	return ""
}

// rowOf is row y's runes, through char(x) for each column.
func rowOf(char func(x int) rune, cols int) string {
	var b []rune
	for x := 0; x < cols; x++ {
		b = append(b, char(x))
	}
	return string(b)
}

// The style bits detect reads are the fork's: detect stays free of the
// emulator, so it spells them out again.
func TestStyleBitsAgree(t *testing.T) {
	for name, pair := range map[string][2]int{
		"reverse": {vt10x.StyleReverse, detect.StyleReverse}, "background": {vt10x.StyleBackground, detect.StyleBackground},
		"foreground": {vt10x.StyleForeground, detect.StyleForeground}, "bold": {vt10x.StyleBold, detect.StyleBold},
		"underline": {vt10x.StyleUnderline, detect.StyleUnderline}, "italic": {vt10x.StyleItalic, detect.StyleItalic},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s: the emulator's bit %#x, detect's %#x", name, pair[0], pair[1])
		}
	}
}

// checkEquivalent feeds data to the fork (whole, and split at random) and
// to upstream, at each size, and fails on the first difference.
func checkEquivalent(t *testing.T, name string, data []byte, seed int64) {
	t.Helper()
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		up := upstream.New(upstream.WithSize(size[0], size[1]))
		(&upstreamFeeder{vt: up}).feed(data)
		whole := vt10x.New(vt10x.WithSize(size[0], size[1]), vt10x.WithScrollback(64<<10))
		whole.Write(data)
		if d := diffState(whole, up); d != "" {
			t.Fatalf("%s at %dx%d, written whole: %s", name, size[0], size[1], d)
		}
		split := vt10x.New(vt10x.WithSize(size[0], size[1]))
		r := rand.New(rand.NewSource(seed))
		for off := 0; off < len(data); {
			n := 1 + r.Intn([]int{3, 17, 300, 4096}[r.Intn(4)])
			split.Write(data[off:min(off+n, len(data))])
			off += n
		}
		if d := diffState(split, up); d != "" {
			t.Fatalf("%s at %dx%d, written in random pieces (seed %d): %s", name, size[0], size[1], seed, d)
		}
	}
}

// TestForkMatchesUpstreamOnRecordings: every recorded agent session.
func TestForkMatchesUpstreamOnRecordings(t *testing.T) {
	files, _ := filepath.Glob("../../fixtures/*/*/*/*.raw")
	if len(files) == 0 {
		t.Skip("no recordings under fixtures/")
	}
	for i, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkEquivalent(t, f, raw, int64(i))
	}
}

// TestForkMatchesUpstreamOnGenerated: random text and escape-heavy input
// from a seeded generator (the seed is in the failure).
func TestForkMatchesUpstreamOnGenerated(t *testing.T) {
	for seed := int64(1); seed <= 300; seed++ {
		checkEquivalent(t, fmt.Sprintf("generated seed %d", seed), generate(rand.New(rand.NewSource(seed)), 6000), seed)
	}
}

// generate writes n bytes of text and escape sequences of the kinds agents
// write and of the kinds that broke upstream.
func generate(r *rand.Rand, n int) []byte {
	words := []string{"hello", "agentd", "❯", "│", "─", "⏺", "你好", "世界", "🔧", "é", "e\u0301", "\u200b", "Ω", "…", "✻", "😀", "ｱ"}
	num := func() string {
		switch r.Intn(8) {
		case 0:
			return ""
		case 1:
			return strconv.Itoa(r.Intn(100000))
		}
		return strconv.Itoa(r.Intn(50))
	}
	var b []byte
	inAlt := false
	for len(b) < n {
		switch k := r.Intn(41); {
		case k < 10:
			for i := r.Intn(30); i > 0; i-- {
				b = append(b, byte(' '+r.Intn(95)))
			}
		case k < 14:
			b = append(b, words[r.Intn(len(words))]...)
		case k < 18:
			b = append(b, []string{"\r\n", "\n", "\r", "\t", "\b", "\a", "\x00", "\x7f", "\x0e"}[r.Intn(9)]...)
		case k < 22: // cursor movement and erasing
			final := "ABCDEFGHJKfdXP@LMSTIZG`ae"[r.Intn(25)]
			b = fmt.Appendf(b, "\x1b[%s;%s%c", num(), num(), final)
		case k < 26: // colours and attributes
			attrs := []string{"0", "1", "3", "4", "5", "7", "22", "27", "31", "42", "91", "103", "39", "49", "38;5;" + num(), "48;5;" + num(), "38;2;1;2;3", "48;2;200;100;0"}
			b = fmt.Appendf(b, "\x1b[%s;%sm", attrs[r.Intn(len(attrs))], attrs[r.Intn(len(attrs))])
		case k < 28: // modes
			modes := []string{"?25", "?2004", "?2026", "?1", "?1000", "?1006", "4", "20", "?6", "?7"}
			b = fmt.Appendf(b, "\x1b[%s%c", modes[r.Intn(len(modes))], "hl"[r.Intn(2)])
		case k < 29:
			// The alternate screen, entered and left in turn: the fork
			// keeps a saved cursor per screen, as xterm does, and upstream
			// one for both, so a second ?1049h on the alternate screen
			// differs on purpose (TestForkFixes).
			screen := []string{"?1049", "?47", "?1047"}[r.Intn(3)]
			if inAlt {
				b = fmt.Appendf(b, "\x1b[%sl", screen)
			} else {
				b = fmt.Appendf(b, "\x1b[%sh", screen)
			}
			inAlt = !inAlt
		case k < 30:
			b = fmt.Appendf(b, "\x1b[%s;%sr", num(), num())
		case k < 31: // titles and other strings
			b = fmt.Appendf(b, "\x1b]%d;%s%s", r.Intn(3), words[r.Intn(len(words))], []string{"\a", "\x1b\\"}[r.Intn(2)])
		case k < 33: // the sequences the fork's patches are about
			odd := []string{"\x1b[?u", "\x1b[>1u", "\x1b[<u", "\x1b[=1;1u", "\x1b[>4;1m", "\x1b[2 q", "\x1b[?2026$p", "\x1b[-5C", "\x1b[+3A",
				"\x1b[99999999999999999999C", "\x1b[1\x18A", "\x1b[3\x1aB", "\x1b\x18x", "\x1b)0", "\x1b(0qx\x1b(B", "\x1b%G", "\x1b c", "\x1bc",
				"\x1b[1;\n5H", "\x1b[38:2::1:2:3m", "\x1bD", "\x1bM", "\x1bE", "\x1bH", "\x1b#8", "\x1b=", "\x1b>"}
			o := odd[r.Intn(len(odd))]
			if o == "\x1bc" {
				inAlt = false // a reset leaves the modes, the alternate screen's included
			}
			b = append(b, o...)
		case k < 34:
			b = append(b, "\xff\xfe"[:1+r.Intn(2)]...) // invalid UTF-8
		default:
			b = fmt.Appendf(b, "\x1b[%d;%dH", r.Intn(45), r.Intn(125))
		}
	}
	return b
}

package vt10x

import (
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Tests of the fork's own patches and of the invariants its fast paths
// lean on. Equivalence with upstream is tested in sessions/term, which
// can import both.

func screenText(t *terminal) []string {
	var rows []string
	for y := 0; y < t.rows; y++ {
		rows = append(rows, string(t.AppendText(nil, y)))
	}
	return rows
}

// textFromCells renders row y through Cell, the slow way AppendText must
// agree with.
func textFromCells(t *terminal, y int) string {
	var b []byte
	last := -1
	for x := 0; x < t.cols; x++ {
		if r := t.Cell(x, y).Char; r != ' ' && r != 0 {
			last = x
		}
	}
	for x := 0; x <= last; x++ {
		g := t.Cell(x, y)
		if g.Mode&AttrWideDummy != 0 && x > 0 && t.Cell(x-1, y).Mode&AttrWide != 0 {
			continue
		}
		r := g.Char
		if r == 0 {
			r = ' '
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// checkSpans fails when a row holds something other than defaultBlank
// outside its span, or when its text differs from the one read cell by cell.
func checkSpans(t *testing.T, vt *terminal, where string) {
	t.Helper()
	for _, screen := range [][]line{vt.lines, vt.altLines} {
		for y, l := range screen {
			lo, hi := l.span()
			for x, c := range l {
				if (x < lo || x >= hi) && c != defaultBlank {
					t.Fatalf("%s: row %d cell %d is %+v, outside the span [%d, %d)", where, y, x, c.glyph(), lo, hi)
				}
			}
		}
	}
	for y := 0; y < vt.rows; y++ {
		if a, b := string(vt.AppendText(nil, y)), textFromCells(vt, y); a != b {
			t.Fatalf("%s: row %d AppendText %q, cell by cell %q", where, y, a, b)
		}
	}
}

func randomInput(r *rand.Rand, n int) []byte {
	pieces := []string{"abc", "hello world ", "你好", "🔧", "❯ ", "e\u0301", "\r\n", "\n", "\r", "\t", "\b",
		"\x1b[K", "\x1b[1K", "\x1b[2K", "\x1b[J", "\x1b[1J", "\x1b[2J", "\x1b[5X", "\x1b[3P", "\x1b[4@", "\x1b[2L", "\x1b[2M",
		"\x1b[S", "\x1b[2T", "\x1b[41m", "\x1b[7m", "\x1b[0m", "\x1b[1;31m", "\x1b[?1049h", "\x1b[?1049l", "\x1b[3;20r", "\x1b[r",
		"\x1bM", "\x1bD", "\x1b#8", "\x1b[?7l", "\x1b[?7h", "\x1b7", "\x1b8", "\x1bc", "\x1b[4h", "\x1b[4l"}
	var b []byte
	for len(b) < n {
		if r.Intn(4) == 0 {
			b = fmt.Appendf(b, "\x1b[%d;%dH", 1+r.Intn(42), 1+r.Intn(124))
			continue
		}
		b = append(b, pieces[r.Intn(len(pieces))]...)
	}
	return b
}

// TestSpans: on generated input and on every recording, cut into random
// pieces, the spans stay honest after every write.
func TestSpans(t *testing.T) {
	inputs := map[string][]byte{}
	for seed := int64(1); seed <= 40; seed++ {
		inputs[fmt.Sprintf("seed %d", seed)] = randomInput(rand.New(rand.NewSource(seed)), 3000)
	}
	files, _ := filepath.Glob("../../../fixtures/*/*/sessions/*.raw")
	for _, f := range files[:min(len(files), 12)] {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = raw
	}
	for name, data := range inputs {
		vt := newTerminal(TerminalInfo{w: io.Discard, cols: 120, rows: 40, scrollback: 8 << 10})
		r := rand.New(rand.NewSource(int64(len(data))))
		for off := 0; off < len(data); {
			n := 1 + r.Intn(400)
			vt.Write(data[off:min(off+n, len(data))])
			off += n
			if r.Intn(8) == 0 || off >= len(data) {
				checkSpans(t, vt, fmt.Sprintf("%s at byte %d", name, off))
			}
		}
	}
}

// TestWideGlyphs: a wide glyph takes two cells, the cursor moves by two,
// it wraps instead of straddling the edge, and writing over either half
// leaves no half glyph behind.
func TestWideGlyphs(t *testing.T) {
	vt := newTerminal(TerminalInfo{w: io.Discard, cols: 10, rows: 3})
	vt.Write([]byte("a你b"))
	if got := string(vt.AppendText(nil, 0)); got != "a你b" {
		t.Fatalf("row 0 = %q", got)
	}
	if c := vt.Cursor(); c.X != 4 {
		t.Fatalf("cursor at %d after a, a wide glyph and b; want 4", c.X)
	}
	if vt.Cell(1, 0).Mode&AttrWide == 0 || vt.Cell(2, 0).Mode&AttrWideDummy == 0 {
		t.Fatalf("cells 1 and 2: %+v %+v", vt.Cell(1, 0), vt.Cell(2, 0))
	}
	vt.Write([]byte("\x1b[1;3Hx")) // over the second half
	if got := string(vt.AppendText(nil, 0)); got != "a xb" {
		t.Fatalf("after writing over the second half: %q", got)
	}
	vt.Write([]byte("\x1b[2;10H世")) // at the last column: to the next row
	if got := screenText(vt); got[1] != "" || got[2] != "世" {
		t.Fatalf("a wide glyph at the last column: rows %q", got)
	}
	vt.Write([]byte("\x1b[3;1He\u0301\u200b!"))
	if got := string(vt.AppendText(nil, 2)); got != "e!" {
		t.Fatalf("zero-width runes: %q", got)
	}
	vt.Write([]byte("\x1b[3;1H\u2764\ufe0fz"))
	if got := string(vt.AppendText(nil, 2)); got != "\u2764z" || vt.Cell(0, 2).Mode&AttrWide == 0 {
		t.Fatalf("U+FE0F widens the glyph before it: %q, %+v", got, vt.Cell(0, 2))
	}
}

// TestSplitRune: a rune cut anywhere across writes is drawn once.
func TestSplitRune(t *testing.T) {
	for _, s := range []string{"你", "🔧", "é"} {
		for cut := 1; cut < len(s); cut++ {
			vt := newTerminal(TerminalInfo{w: io.Discard, cols: 10, rows: 2})
			vt.Write([]byte("<" + s[:cut]))
			vt.Write([]byte(s[cut:] + ">"))
			if got := string(vt.AppendText(nil, 0)); got != "<"+s+">" {
				t.Fatalf("%q cut at %d: %q", s, cut, got)
			}
		}
	}
}

// TestAltScreenCursor: ?1049l puts the cursor back where ?1049h found it,
// whatever the program saved on the alternate screen, and the alternate
// screen is made only when first entered.
func TestAltScreenCursor(t *testing.T) {
	vt := newTerminal(TerminalInfo{w: io.Discard, cols: 20, rows: 5})
	if vt.altLines != nil {
		t.Fatal("the alternate screen exists before it is used")
	}
	vt.Write([]byte("\x1b[3;7Hmain\x1b[3;7H\x1b[?1049h"))
	if vt.altLines == nil || vt.Mode()&ModeAltScreen == 0 {
		t.Fatal("?1049h did not enter the alternate screen")
	}
	vt.Write([]byte("\x1b[5;1H\x1b7tui\x1b[1;1H\x1b[?1049l"))
	if c := vt.Cursor(); c.X != 6 || c.Y != 2 {
		t.Fatalf("cursor after ?1049l at %d,%d; want 6,2", c.X, c.Y)
	}
	if got := string(vt.AppendText(nil, 2)); got != "      main" {
		t.Fatalf("main screen row 2 = %q", got)
	}
	vt.Write([]byte("\x1b[?1049l"))
	if vt.Mode()&ModeAltScreen != 0 {
		t.Fatal("?1049l on the main screen switched to the alternate one")
	}
}

// TestCSIGuards: counts are capped, signed or prefixed sequences do
// nothing, CSI ? u restores nothing, CAN ends a sequence.
func TestCSIGuards(t *testing.T) {
	vt := newTerminal(TerminalInfo{w: io.Discard, cols: 20, rows: 5})
	vt.Write([]byte("\x1b[2;5H\x1b[s\x1b[4;9H\x1b[?u\x1b[>1u\x1b[-3C\x1b[+2A\x1b[>4;1m"))
	if c := vt.Cursor(); c.X != 8 || c.Y != 3 {
		t.Fatalf("cursor at %d,%d; want 8,3", c.X, c.Y)
	}
	vt.Write([]byte("\x1b[1\x18A"))
	if c := vt.Cursor(); c.Y != 3 || string(vt.AppendText(nil, 3)) != "        A" {
		t.Fatalf("CAN did not end the sequence: cursor %d,%d, row %q", c.X, c.Y, vt.AppendText(nil, 3))
	}
	vt.Write([]byte("\x1b[99999999999I\x1b[99999999999Z"))
	vt.Write([]byte("\x1b[1;1H\x1b)0x\x1b%Gy"))
	if got := string(vt.AppendText(nil, 0)); got != "xy" {
		t.Fatalf("designators printed: row 0 = %q", got)
	}
	vt.Write([]byte("\x1b[5;1Habc\x1b[1;1H\x1b[0P"))
	if got := string(vt.AppendText(nil, 4)); got != "abc" {
		t.Fatalf("CSI 0 P on another row changed row 4: %q", got)
	}
}

// TestScrollback: lines scrolled off the main screen are kept in order,
// with their colours, up to the limit; the alternate screen and deleted
// lines add none.
func TestScrollback(t *testing.T) {
	vt := newTerminal(TerminalInfo{w: io.Discard, cols: 20, rows: 5, scrollback: 1 << 20})
	for i := 0; i < 30; i++ {
		fmt.Fprintf(vt, "line %d\x1b[31m red\x1b[0m\r\n", i)
	}
	if n := vt.Scrollback(); n != 26 {
		t.Fatalf("%d lines kept; want 26", n)
	}
	for i := 0; i < 26; i++ {
		if got, want := string(vt.AppendScrollback(nil, i, true)), fmt.Sprintf("line %d red", i); got != want {
			t.Fatalf("line %d = %q, want %q", i, got, want)
		}
	}
	ansi := string(vt.AppendScrollback(nil, 3, false))
	if !strings.Contains(ansi, "line 3 \x1b[0;31mred\x1b[0m") {
		t.Fatalf("line 3 with colours = %q", ansi)
	}
	vt.Write([]byte("\x1b[?1049h\r\n\r\n\r\n\r\n\r\n\r\n\x1b[?1049l\x1b[1;1H\x1b[3M"))
	if n := vt.Scrollback(); n != 26 {
		t.Fatalf("the alternate screen or deleted lines reached the scrollback: %d lines", n)
	}

	small := newTerminal(TerminalInfo{w: io.Discard, cols: 20, rows: 5, scrollback: 1000})
	for i := 0; i < 500; i++ {
		fmt.Fprintf(small, "line %d\r\n", i)
	}
	if small.sb.size > 1000 || small.Scrollback() == 0 {
		t.Fatalf("%d lines in %d bytes against a limit of 1000", small.Scrollback(), small.sb.size)
	}
	if got := string(small.AppendScrollback(nil, small.Scrollback()-1, true)); got != "line 495" {
		t.Fatalf("newest kept line = %q", got)
	}
}

// TestANSIRoundTrip: a row written back with AppendANSI into a fresh
// terminal gives the same glyphs, with their colours and attributes.
func TestANSIRoundTrip(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		vt := newTerminal(TerminalInfo{w: io.Discard, cols: 40, rows: 8})
		vt.Write(randomInput(rand.New(rand.NewSource(seed)), 2000))
		for y := 0; y < vt.rows; y++ {
			fresh := newTerminal(TerminalInfo{w: io.Discard, cols: 40, rows: 8})
			fresh.Write(vt.AppendANSI(nil, y))
			for x := 0; x < vt.cols; x++ {
				a, b := vt.Cell(x, y), fresh.Cell(x, 0)
				a.Mode &^= AttrWrap | AttrGfx
				b.Mode &^= AttrWrap | AttrGfx
				if a.Char == 0 {
					a.Char = ' '
				}
				// Blanks are left out: an erased cell keeps the pen's
				// reverse bit without its colours swapped (upstream's
				// erase), which no SGR can write back.
				if a != b && !(a.Char == ' ' && b.Char == ' ') {
					t.Fatalf("seed %d row %d cell %d: %+v, written back %+v (%q)", seed, y, x, a, b, vt.AppendANSI(nil, y))
				}
			}
		}
	}
}

// FuzzFeed: any bytes, split anywhere, leave the same state as the same
// bytes in one write, the spans stay honest, and nothing panics.
// feedHang: far beyond the slowest input seen (under 300 ms in 3 minutes
// of fuzzing on a busy 2-core machine; most take microseconds).
const feedHang = 20 * time.Second

func FuzzFeed(f *testing.F) {
	files, _ := filepath.Glob("../../../fixtures/*/*/blocked/*.raw")
	for _, p := range files[:min(len(files), 8)] {
		if raw, err := os.ReadFile(p); err == nil {
			f.Add(raw[max(0, len(raw)-512):], uint16(7))
		}
	}
	f.Add(randomInput(rand.New(rand.NewSource(1)), 400), uint16(3))
	f.Add([]byte("a你b\x1b[?1049h\x1b[2;3H🔧\x1b[4@\x1b[2P\x1b[?1049l\x1b[38:2::1:2:3m\xff\xfe\u2764\ufe0f"), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, step uint16) {
		if len(data) > 1<<16 {
			return
		}
		// An input that takes the emulator this long is a hang an agent's
		// output could cause: crash the worker, so the fuzzer keeps the
		// input as a crasher. Without this, a stuck worker ends the run as
		// "context deadline exceeded" with nothing saved (CI, once).
		guard := time.AfterFunc(feedHang, func() {
			panic(fmt.Sprintf("FuzzFeed: %d bytes (split every %d) not fed after %v", len(data), int(step%13)+1, feedHang))
		})
		defer guard.Stop()
		whole := newTerminal(TerminalInfo{w: io.Discard, cols: 30, rows: 8, scrollback: 4 << 10})
		whole.Write(data)
		split := newTerminal(TerminalInfo{w: io.Discard, cols: 30, rows: 8, scrollback: 4 << 10})
		n := int(step%13) + 1
		for i := 0; i < len(data); i += n {
			split.Write(data[i:min(i+n, len(data))])
		}
		checkSpans(t, whole, "whole")
		checkSpans(t, split, "split")
		for y := 0; y < whole.rows; y++ {
			for x := 0; x < whole.cols; x++ {
				if a, b := whole.Cell(x, y), split.Cell(x, y); a != b {
					t.Fatalf("split every %d bytes: cell %d,%d %+v, whole %+v", n, x, y, b, a)
				}
			}
		}
		if whole.Cursor() != split.Cursor() || whole.Scrollback() != split.Scrollback() {
			t.Fatalf("split every %d bytes: cursor %+v scrollback %d, whole %+v %d", n, split.Cursor(), split.Scrollback(), whole.Cursor(), whole.Scrollback())
		}
	})
}

// TestRepaint: a terminal repainted into a fresh one of the same size
// gives the same scrollback, both screens, cursor and input modes.
func TestRepaint(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewSource(seed))
		src := newTerminal(TerminalInfo{w: io.Discard, cols: 30, rows: 6, scrollback: 1 << 20})
		for i := 0; i < 20; i++ {
			fmt.Fprintf(src, "line %d \x1b[3%dmcolour\x1b[0m\r\n", i, r.Intn(8))
		}
		src.Write(randomInput(r, 300))
		src.Write([]byte("\x1b[?1h\x1b[?1000h\x1b[?1006h\x1b[2;5r"))
		if r.Intn(2) == 0 {
			src.Write([]byte("\x1b[?1049h\x1b[3;3H\x1b[7malt\x1b[0m"))
		}
		src.Write([]byte(fmt.Sprintf("\x1b[%d;%dH", 1+r.Intn(6), 1+r.Intn(30))))
		dst := newTerminal(TerminalInfo{w: io.Discard, cols: 30, rows: 6, scrollback: 1 << 20})
		dst.Write(src.AppendRepaint(nil, true))
		if a, b := src.Scrollback(), dst.Scrollback(); a != b {
			t.Fatalf("seed %d: %d scrollback lines repainted as %d", seed, a, b)
		}
		for i := 0; i < src.Scrollback(); i++ {
			if a, b := string(src.AppendScrollback(nil, i, false)), string(dst.AppendScrollback(nil, i, false)); a != b {
				t.Fatalf("seed %d: scrollback line %d %q repainted as %q", seed, i, a, b)
			}
		}
		// Cells must look the same: a glyph's colours and attributes, a
		// blank's background (an erased cell keeps the pen's foreground
		// unbrightened, a printed blank brightened; neither shows).
		sameScreen := func(what string, a, b []line) {
			for y := range a {
				for x := range a[y] {
					ca, cb := a[y][x], b[y][x]
					fa, ba, ra := look(ca)
					fb, bb, rb := look(cb)
					same := ba == bb && ra == rb && ca.char() == cb.char()
					if ca.char() != ' ' && ca.char() != 0 {
						same = same && fa == fb && sameLook(ca, cb)
					}
					if !same {
						t.Fatalf("seed %d: %s row %d cell %d %+v repainted as %+v\n%q\n%q", seed, what, y, x, ca.glyph(), cb.glyph(), appendANSI(nil, a[y]), appendANSI(nil, b[y]))
					}
				}
			}
		}
		sameScreen("screen", src.lines, dst.lines)
		if src.Mode()&ModeAltScreen != 0 {
			sameScreen("main screen", src.altLines, dst.altLines)
		}
		const keys = ModeAltScreen | ModeAppCursor | ModeMouseMask | ModeMouseSgr | ModeHide
		if a, b := src.Cursor(), dst.Cursor(); a.X != b.X || a.Y != b.Y || src.Mode()&keys != dst.Mode()&keys || src.top != dst.top || src.bottom != dst.bottom {
			t.Fatalf("seed %d: cursor %d,%d modes %#x region %d-%d repainted as %d,%d %#x %d-%d", seed, a.X, a.Y, src.Mode()&keys, src.top, src.bottom, b.X, b.Y, dst.Mode()&keys, dst.top, dst.bottom)
		}
	}
}

package term

import (
	"reflect"
	"unicode/utf8"
	"unsafe"

	"github.com/hinshun/vt10x"
)

// Rendering only what changed. vt10x marks each row it touches dirty and
// clears the marks in Unlock, which only Snapshot calls; it keeps the
// marks and the rows unexported. vtInner reaches them, for the vt10x
// version go.mod pins: reachInner checks the fields' names and types and,
// should they ever differ, returns nothing and every Snapshot renders every
// row through Cell as before. TestIncrementalSnapshot holds the two ways to
// the same screens on every recorded session.
type vtInner struct {
	dirty *[]bool
	lines *[][]vt10x.Glyph
}

func (in vtInner) ok() bool { return in.dirty != nil && in.lines != nil }

// reachInner finds vt10x's dirty marks and rows inside vt (a *terminal
// embedding *State), or returns the zero vtInner.
func reachInner(vt vt10x.Terminal) (in vtInner) {
	defer func() {
		if recover() != nil {
			in = vtInner{}
		}
	}()
	v := reflect.ValueOf(vt)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return vtInner{}
	}
	st := v.Elem().FieldByName("State")
	if !st.IsValid() || st.Kind() != reflect.Pointer || st.IsNil() || st.Elem().Type() != reflect.TypeOf(vt10x.State{}) {
		return vtInner{}
	}
	state := st.Elem()
	dirty, lines := state.FieldByName("dirty"), state.FieldByName("lines")
	if !dirty.IsValid() || dirty.Type() != reflect.TypeOf([]bool(nil)) {
		return vtInner{}
	}
	if !lines.IsValid() || lines.Kind() != reflect.Slice || lines.Type().Elem().Kind() != reflect.Slice ||
		lines.Type().Elem().Elem() != reflect.TypeOf(vt10x.Glyph{}) || !dirty.CanAddr() || !lines.CanAddr() {
		return vtInner{}
	}
	return vtInner{
		dirty: (*[]bool)(unsafe.Pointer(dirty.UnsafeAddr())),
		lines: (*[][]vt10x.Glyph)(unsafe.Pointer(lines.UnsafeAddr())),
	}
}

// renderRows brings t.shown up to date with the screen: every row when
// full, when the size changed or when vt10x's insides are out of reach,
// else the rows marked dirty. A row whose text did not change keeps its
// string. Called with t.mu and the vt10x lock held.
func (t *Terminal) renderRows(cols, rows int, full bool) {
	in := t.inner
	if !in.ok() || len(*in.dirty) != rows || len(*in.lines) != rows {
		in, full = vtInner{}, true
	}
	if len(t.shown) != rows {
		t.shown = make([]string, rows)
		full = true
	}
	buf := t.rowBuf[:0]
	for y := 0; y < rows; y++ {
		if !full && !(*in.dirty)[y] {
			continue
		}
		if in.ok() && len((*in.lines)[y]) == cols {
			buf = renderLine(buf[:0], (*in.lines)[y])
		} else {
			buf = t.renderCells(buf[:0], cols, y)
		}
		if string(buf) != t.shown[y] {
			t.shown[y] = string(buf)
		}
	}
	t.rowBuf = buf
}

// renderLine is one row's text with trailing blanks cut; the second cell of
// a wide glyph is skipped.
func renderLine(buf []byte, line []vt10x.Glyph) []byte {
	last := len(line) - 1
	for ; last >= 0; last-- {
		if r := line[last].Char; r != ' ' && r != 0 {
			break
		}
	}
	for x := 0; x <= last; x++ {
		r := line[x].Char
		if r == 0 {
			r = ' '
		}
		buf = utf8.AppendRune(buf, r)
		if r >= 0x1100 && cellWidth(r) == 2 && x+1 <= last && line[x+1].Char == ' ' {
			x++ // the wide glyph's second cell
		}
	}
	return buf
}

// renderCells is renderLine through vt10x's public Cell.
func (t *Terminal) renderCells(buf []byte, cols, y int) []byte {
	last := cols - 1
	for ; last >= 0; last-- {
		if r := t.vt.Cell(last, y).Char; r != ' ' && r != 0 {
			break
		}
	}
	for x := 0; x <= last; x++ {
		r := t.vt.Cell(x, y).Char
		if r == 0 {
			r = ' '
		}
		buf = utf8.AppendRune(buf, r)
		if r >= 0x1100 && cellWidth(r) == 2 && x+1 <= last && t.vt.Cell(x+1, y).Char == ' ' {
			x++ // the wide glyph's second cell
		}
	}
	return buf
}

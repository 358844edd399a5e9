package vt10x

import (
	"io"
	"log"
	"sync"
)

const (
	tabspaces = 8
)

// Cell attributes, as Glyph.Mode bits.
const (
	AttrReverse = 1 << iota
	AttrUnderline
	AttrBold
	AttrGfx
	AttrItalic
	AttrBlink
	AttrWrap
	// AttrWide marks the first cell of a glyph two cells wide; the cell
	// after it is AttrWideDummy, holds a space and is no glyph of its own.
	AttrWide
	AttrWideDummy
)

// The lower-case names are upstream's, kept so its code reads unchanged.
const (
	attrReverse   = AttrReverse
	attrUnderline = AttrUnderline
	attrBold      = AttrBold
	attrGfx       = AttrGfx
	attrItalic    = AttrItalic
	attrBlink     = AttrBlink
	attrWrap      = AttrWrap
	attrWide      = AttrWide
	attrWideDummy = AttrWideDummy
)

const (
	cursorDefault = 1 << iota
	cursorWrapNext
	cursorOrigin
)

// ModeFlag represents various terminal mode states.
type ModeFlag uint32

// Terminal modes
const (
	ModeWrap ModeFlag = 1 << iota
	ModeInsert
	ModeAppKeypad
	ModeAltScreen
	ModeCRLF
	ModeMouseButton
	ModeMouseMotion
	ModeReverse
	ModeKeyboardLock
	ModeHide
	ModeEcho
	ModeAppCursor
	ModeMouseSgr
	Mode8bit
	ModeBlink
	ModeFBlink
	ModeFocus
	ModeMouseX10
	ModeMouseMany
	ModeMouseMask = ModeMouseButton | ModeMouseMotion | ModeMouseX10 | ModeMouseMany
)

// ChangeFlag represents possible state changes of the terminal.
type ChangeFlag uint32

// Terminal changes to occur in VT.ReadState
const (
	ChangedScreen ChangeFlag = 1 << iota
	ChangedTitle
)

// Glyph is one cell as the API shows it.
type Glyph struct {
	Char   rune
	Mode   int16
	FG, BG Color
}

// cell is a Glyph packed into 12 bytes instead of 16: the rune takes the
// low 21 bits of ch and the mode the 11 above them. A 120x40 screen is
// 57.6 KB instead of 76.8 KB.
type cell struct {
	ch     uint32
	fg, bg Color
}

const (
	runeBits = 21
	runeMask = 1<<runeBits - 1
)

func (c cell) char() rune  { return rune(c.ch & runeMask) }
func (c cell) mode() int16 { return int16(c.ch >> runeBits) }
func (c cell) glyph() Glyph {
	return Glyph{Char: c.char(), Mode: c.mode(), FG: c.fg, BG: c.bg}
}

func pack(g Glyph) cell {
	return cell{ch: uint32(g.Char)&runeMask | uint32(uint16(g.Mode))<<runeBits, fg: g.FG, bg: g.BG}
}

// line is one row: len(l) cells, and one more past its length (within its
// capacity) that holds the row's span [lo, hi): every cell outside it is
// defaultBlank. Erasing, scrolling and rendering touch only the cells in
// the span, and the span moves with the row when rows rotate. An empty
// row's span is [len(l), 0).
type line []cell

// defaultBlank is an erased cell in the default colours: what a new
// screen holds.
var defaultBlank = cell{ch: ' ', fg: DefaultFG, bg: DefaultBG}

func (l line) meta() *cell { return &l[:len(l)+1][len(l)] }

// span returns the row's span; lo > hi-1 when it is empty.
func (l line) span() (lo, hi int) {
	m := l.meta()
	return int(m.fg), int(m.ch)
}

func (l line) setSpan(lo, hi int) {
	m := l.meta()
	m.fg, m.ch = Color(lo), uint32(hi)
}

// mark records that cells x0..x1-1 may now hold something other than
// defaultBlank.
func (l line) mark(x0, x1 int) {
	lo, hi := l.span()
	if lo >= hi {
		l.setSpan(x0, x1)
		return
	}
	l.setSpan(min(lo, x0), max(hi, x1))
}

type Cursor struct {
	Attr  Glyph
	X, Y  int
	State uint8
}

// State represents the terminal emulation state. Use Lock/Unlock
// methods to synchronize data access with VT.
type State struct {
	DebugLogger *log.Logger

	w          io.Writer
	mu         sync.Mutex
	changed    ChangeFlag
	cols, rows int
	lines      []line
	// altLines is the other screen, made when it is first needed: most
	// sessions never use the alternate screen, and it is as large as the
	// main one.
	altLines []line
	// base and altBase back lines and altLines with twice their rows:
	// scrolling the whole screen slides the window (lines is
	// base[off:off+rows]) instead of moving every row up.
	base, altBase []line
	off, altOff   int
	dirty         []bool // line dirtiness
	anydirty      bool
	allDirty      bool // every row is dirty, whatever dirty says
	cur           Cursor
	// curSaved is the saved cursor of each screen (main, alternate), as
	// xterm keeps them: a DECSC on the alternate screen does not lose the
	// cursor ?1049h saved for the main one.
	curSaved      [2]Cursor
	top, bottom   int // scroll limits
	mode          ModeFlag
	state         parseState
	str           strEscape
	csi           csiEscape
	numlock       bool
	tabs          []bool
	title         string
	colorOverride map[Color]Color
	partial       [utf8Max]byte // the head of a rune split across writes
	npartial      int
	sb            scrollback
}

func newState(w io.Writer) *State {
	return &State{
		w:             w,
		colorOverride: make(map[Color]Color),
	}
}

func (t *State) logf(format string, args ...interface{}) {
	if t.DebugLogger != nil {
		t.DebugLogger.Printf(format, args...)
	}
}

func (t *State) logln(s string) {
	if t.DebugLogger != nil {
		t.DebugLogger.Println(s)
	}
}

func (t *State) lock() {
	t.mu.Lock()
}

func (t *State) unlock() {
	t.mu.Unlock()
}

// Lock locks the state object's mutex.
func (t *State) Lock() {
	t.mu.Lock()
}

// Unlock resets change flags and unlocks the state object's mutex.
func (t *State) Unlock() {
	t.resetChanges()
	t.mu.Unlock()
}

// Cell returns the glyph containing the character code, foreground color, and
// background color at position (x, y) relative to the top left of the terminal.
func (t *State) Cell(x, y int) Glyph {
	cell := t.lines[y][x].glyph()
	if len(t.colorOverride) == 0 {
		return cell
	}
	fg, ok := t.colorOverride[cell.FG]
	if ok {
		cell.FG = fg
	}
	bg, ok := t.colorOverride[cell.BG]
	if ok {
		cell.BG = bg
	}
	return cell
}

// Dirty reports whether row y changed since the last Unlock.
func (t *State) Dirty(y int) bool { return t.allDirty || t.dirty[y] }

// Cursor returns the current position of the cursor.
func (t *State) Cursor() Cursor {
	return t.cur
}

// CursorVisible returns the visible state of the cursor.
func (t *State) CursorVisible() bool {
	return t.mode&ModeHide == 0
}

// Mode returns the current terminal mode.
func (t *State) Mode() ModeFlag {
	return t.mode
}

// Title returns the current title set via the tty.
func (t *State) Title() string {
	return t.title
}

// Changed returns true if change has occured.
func (t *State) Changed(change ChangeFlag) bool {
	return t.changed&change != 0
}

// resetChanges resets the change mask and dirtiness.
func (t *State) resetChanges() {
	clear(t.dirty)
	t.anydirty = false
	t.allDirty = false
	t.changed = 0
}

func (t *State) screen() int {
	if t.mode&ModeAltScreen != 0 {
		return 1
	}
	return 0
}

func (t *State) saveCursor() {
	t.curSaved[t.screen()] = t.cur
}

func (t *State) restoreCursor() {
	t.cur = t.curSaved[t.screen()]
	t.moveTo(t.cur.X, t.cur.Y)
}

func (t *State) putTab(forward bool) {
	x := t.cur.X
	if forward {
		if x == t.cols {
			return
		}
		for x++; x < t.cols && !t.tabs[x]; x++ {
		}
	} else {
		if x == 0 {
			return
		}
		for x--; x > 0 && !t.tabs[x]; x-- {
		}
	}
	t.moveTo(x, t.cur.Y)
}

func (t *State) newline(firstCol bool) {
	y := t.cur.Y
	if y == t.bottom {
		cur := t.cur
		t.cur = t.defaultCursor()
		t.scrollUp(t.top, 1)
		t.cur = cur
	} else {
		y++
	}
	if firstCol {
		t.moveTo(0, y)
	} else {
		t.moveTo(t.cur.X, y)
	}
}

// table from st, which in turn is from rxvt :)
var gfxCharTable = [62]rune{
	'↑', '↓', '→', '←', '█', '▚', '☃', // A - G
	0, 0, 0, 0, 0, 0, 0, 0, // H - O
	0, 0, 0, 0, 0, 0, 0, 0, // P - W
	0, 0, 0, 0, 0, 0, 0, ' ', // X - _
	'◆', '▒', '␉', '␌', '␍', '␊', '°', '±', // ` - g
	'␤', '␋', '┘', '┐', '┌', '└', '┼', '⎺', // h - o
	'⎻', '─', '⎼', '⎽', '├', '┤', '┴', '┬', // p - w
	'│', '≤', '≥', 'π', '≠', '£', '·', // x - ~
}

// pen is the cell the cursor's attributes write, without its rune: bold
// brightens the first eight colours and reverse swaps the two, at the time
// of writing, as upstream does.
func (t *State) pen() cell {
	attr := &t.cur.Attr
	c := cell{ch: uint32(uint16(attr.Mode)) << runeBits, fg: attr.FG, bg: attr.BG}
	if attr.Mode&attrBold != 0 && attr.FG < 8 {
		c.fg = attr.FG + 8
	}
	if attr.Mode&attrReverse != 0 {
		c.fg, c.bg = attr.BG, attr.FG
	}
	return c
}

// blank is the cell erasing writes: a space in the cursor's attributes as
// they are, not brightened or swapped (upstream's clear).
func (t *State) blank() cell {
	return pack(Glyph{Char: ' ', Mode: t.cur.Attr.Mode, FG: t.cur.Attr.FG, BG: t.cur.Attr.BG})
}

func (t *State) setChar(c rune, attr *Glyph, x, y int) {
	if attr.Mode&attrGfx != 0 {
		if c >= 0x41 && c <= 0x7e && gfxCharTable[c-0x41] != 0 {
			c = gfxCharTable[c-0x41]
		}
	}
	t.changed |= ChangedScreen
	t.dirty[y] = true
	t.unsplit(x, x+1, y)
	p := t.pen()
	p.ch |= uint32(c) & runeMask
	t.lines[y][x] = p
	t.lines[y].mark(x, x+1)
}

// unsplit is called before cells x0..x1-1 of row y are overwritten: a wide
// glyph cut in half by them loses its other half, which becomes a space.
func (t *State) unsplit(x0, x1, y int) {
	l := t.lines[y]
	if x0 > 0 && x0 < len(l) && isPair(l, x0-1) {
		l[x0-1] = halfBlank(l[x0-1])
	}
	if x1 > 0 && x1 < len(l) && isPair(l, x1-1) {
		l[x1] = halfBlank(l[x1])
	}
}

// isPair reports whether cells x and x+1 are a wide glyph and its second
// half.
func isPair(l line, x int) bool {
	return l[x].mode()&attrWide != 0 && l[x+1].mode()&attrWideDummy != 0
}

// halfBlank is what is left of one half of a wide glyph: a space in its
// colours.
func halfBlank(c cell) cell {
	return cell{ch: ' ' | uint32(uint16(c.mode()&^(attrWide|attrWideDummy)))<<runeBits, fg: c.fg, bg: c.bg}
}

func (t *State) defaultCursor() Cursor {
	c := Cursor{}
	c.Attr.FG = DefaultFG
	c.Attr.BG = DefaultBG
	return c
}

func (t *State) reset() {
	t.cur = t.defaultCursor()
	t.curSaved = [2]Cursor{t.cur, t.cur}
	for i := range t.tabs {
		t.tabs[i] = false
	}
	for i := tabspaces; i < len(t.tabs); i += tabspaces {
		t.tabs[i] = true
	}
	t.top = 0
	t.bottom = t.rows - 1
	t.mode = ModeWrap
	// Upstream passed rows and columns the wrong way round here, so a
	// reset cleared only the first `rows` columns.
	t.clear(0, 0, t.cols-1, t.rows-1)
	t.moveTo(0, 0)
}

// newLines makes a screen whose cells are unknown (their span is the
// whole row) until they are cleared. It returns the screen's base: the
// rows, then as many empty slots for the window to slide into.
func newLines(rows, cols int) []line {
	// One backing array for the whole screen: one allocation, and rows
	// next to each other in memory.
	w := cols + 1
	cells := make([]cell, rows*w)
	lines := make([]line, 2*rows)
	for i := range lines[:rows] {
		lines[i] = cells[i*w : i*w+cols : (i+1)*w]
		lines[i].setSpan(0, cols)
	}
	return lines
}

func (t *State) resize(cols, rows int) bool {
	if cols == t.cols && rows == t.rows {
		return false
	}
	if cols < 1 || rows < 1 {
		return false
	}
	slide := t.cur.Y - rows + 1
	if slide > 0 {
		// The rows above the cursor that no longer fit go to the
		// scrollback, as they would had they scrolled off.
		if t.mode&ModeAltScreen == 0 {
			for i := 0; i < slide; i++ {
				t.sb.push(t.lines[i])
			}
		}
		copy(t.lines, t.lines[slide:slide+rows])
		if t.altLines != nil {
			copy(t.altLines, t.altLines[slide:slide+rows])
		}
	}

	lines, altLines, tabs := t.lines, t.altLines, t.tabs
	t.base, t.off = newLines(rows, cols), 0
	t.lines = t.base[:rows]
	t.altBase, t.altOff, t.altLines = nil, 0, nil
	if altLines != nil {
		t.altBase = newLines(rows, cols)
		t.altLines = t.altBase[:rows]
	}
	t.dirty = make([]bool, rows)
	t.tabs = make([]bool, cols)

	minrows := min(rows, t.rows)
	mincols := min(cols, t.cols)
	t.changed |= ChangedScreen
	for i := 0; i < rows; i++ {
		t.dirty[i] = true
	}
	for i := 0; i < minrows; i++ {
		copy(t.lines[i], lines[i])
		if altLines != nil {
			copy(t.altLines[i], altLines[i])
		}
	}
	copy(t.tabs, tabs)
	if cols > t.cols {
		i := t.cols - 1
		for i > 0 && !tabs[i] {
			i--
		}
		for i += tabspaces; i < len(tabs); i += tabspaces {
			tabs[i] = true
		}
	}

	t.cols = cols
	t.rows = rows
	t.setScroll(0, rows-1)
	t.moveTo(t.cur.X, t.cur.Y)
	for i := 0; i < 2; i++ {
		if t.lines != nil {
			if mincols < cols && minrows > 0 {
				t.clear(mincols, 0, cols-1, minrows-1)
			}
			if cols > 0 && minrows < rows {
				t.clear(0, minrows, cols-1, rows-1)
			}
		}
		t.lines, t.altLines = t.altLines, t.lines
	}
	return slide > 0
}

// fill sets cells x0..x1 of row y to c, doubling the copied span: a row is
// one store and a few copies, not a loop over cells.
func fill(l line, x0, x1 int, c cell) {
	s := l[x0 : x1+1]
	if len(s) == 0 {
		return
	}
	s[0] = c
	for n := 1; n < len(s); n *= 2 {
		copy(s[n:], s[:n])
	}
}

func (t *State) clear(x0, y0, x1, y1 int) {
	if x0 > x1 {
		x0, x1 = x1, x0
	}
	if y0 > y1 {
		y0, y1 = y1, y0
	}
	x0 = clamp(x0, 0, t.cols-1)
	x1 = clamp(x1, 0, t.cols-1)
	y0 = clamp(y0, 0, t.rows-1)
	y1 = clamp(y1, 0, t.rows-1)
	t.changed |= ChangedScreen
	b := t.blank()
	for y := y0; y <= y1; y++ {
		t.dirty[y] = true
		t.unsplit(x0, x1+1, y)
		erase(t.lines[y], x0, x1, b)
	}
}

// erase sets cells x0..x1 of l to b, keeping l's span.
func erase(l line, x0, x1 int, b cell) {
	if b != defaultBlank {
		fill(l, x0, x1, b)
		l.mark(x0, x1+1)
		return
	}
	lo, hi := l.span()
	if lo >= hi || x1 < lo || x0 >= hi {
		return // blank already
	}
	fill(l, max(x0, lo), min(x1, hi-1), b)
	switch {
	case x0 <= lo && x1+1 >= hi:
		l.setSpan(len(l), 0)
	case x0 <= lo:
		l.setSpan(x1+1, hi)
	case x1+1 >= hi:
		l.setSpan(lo, x0)
	}
}

func (t *State) clearAll() {
	t.clear(0, 0, t.cols-1, t.rows-1)
}

func (t *State) moveAbsTo(x, y int) {
	if t.cur.State&cursorOrigin != 0 {
		y += t.top
	}
	t.moveTo(x, y)
}

func (t *State) moveTo(x, y int) {
	var miny, maxy int
	if t.cur.State&cursorOrigin != 0 {
		miny = t.top
		maxy = t.bottom
	} else {
		miny = 0
		maxy = t.rows - 1
	}
	x = clamp(x, 0, t.cols-1)
	y = clamp(y, miny, maxy)
	t.changed |= ChangedScreen
	t.cur.State &^= cursorWrapNext
	t.cur.X = x
	t.cur.Y = y
}

func (t *State) swapScreen() {
	if t.altLines == nil {
		t.altBase, t.altOff = newLines(t.rows, t.cols), 0
		t.altLines = t.altBase[:t.rows]
		for _, l := range t.altLines {
			fill(l, 0, len(l)-1, defaultBlank)
			l.setSpan(len(l), 0)
		}
	}
	t.lines, t.altLines = t.altLines, t.lines
	t.base, t.altBase = t.altBase, t.base
	t.off, t.altOff = t.altOff, t.off
	t.mode ^= ModeAltScreen
	t.dirtyAll()
}

func (t *State) dirtyAll() {
	t.changed |= ChangedScreen
	t.allDirty = true
}

// dirtyRows marks rows y0..y1 dirty.
func (t *State) dirtyRows(y0, y1 int) {
	if y0 == 0 && y1 == t.rows-1 {
		t.allDirty = true
		return
	}
	for y := y0; y <= y1; y++ {
		t.dirty[y] = true
	}
}

func (t *State) setScroll(top, bottom int) {
	top = clamp(top, 0, t.rows-1)
	bottom = clamp(bottom, 0, t.rows-1)
	if top > bottom {
		top, bottom = bottom, top
	}
	t.top = top
	t.bottom = bottom
}

func clamp(val, min, max int) int {
	if val < min {
		return min
	} else if val > max {
		return max
	}
	return val
}

func between(val, min, max int) bool {
	if val < min || val > max {
		return false
	}
	return true
}

// scrollDown moves rows orig..bottom-n down by n and blanks the n rows at
// orig. The row slices rotate (no cells are copied), as upstream's
// swapping ends up doing one swap at a time.
func (t *State) scrollDown(orig, n int) {
	n = clamp(n, 0, t.bottom-orig+1)
	if n == 0 {
		return
	}
	t.changed |= ChangedScreen
	region := t.lines[orig : t.bottom+1]
	rotate(region, len(region)-n)
	t.clear(0, orig, t.cols-1, orig+n-1)
	t.dirtyRows(orig, t.bottom)
}

// scrollUp moves rows orig+n..bottom up by n and blanks the n rows at the
// bottom. Rows leaving the top of the main screen go to the scrollback.
func (t *State) scrollUp(orig, n int) {
	n = clamp(n, 0, t.bottom-orig+1)
	if n == 0 {
		return
	}
	if orig == 0 && t.mode&ModeAltScreen == 0 {
		for i := 0; i < n; i++ {
			t.sb.push(t.lines[i])
		}
	}
	t.changed |= ChangedScreen
	if orig == 0 && t.bottom == t.rows-1 && n < t.rows && n <= 64 {
		t.slide(n)
	} else {
		rotate(t.lines[orig:t.bottom+1], n)
	}
	t.clear(0, t.bottom-n+1, t.cols-1, t.bottom)
	t.dirtyRows(orig, t.bottom)
}

// slide scrolls the whole screen up by n (n < rows, n <= 64) by moving
// its window down the base: the n rows leaving the top become the rows
// entering at the bottom. When the window reaches the end of the base, the
// rows go back to its start, once every `rows` lines.
func (t *State) slide(n int) {
	b, rows := t.base, t.rows
	if t.off+rows+n <= len(b) {
		copy(b[t.off+rows:t.off+rows+n], b[t.off:t.off+n])
		t.off += n
	} else {
		var top [64]line
		copy(top[:n], b[t.off:t.off+n])
		copy(b, b[t.off+n:t.off+rows])
		copy(b[rows-n:rows], top[:n])
		t.off = 0
	}
	t.lines = b[t.off : t.off+rows]
}

// rotate turns s left by k: s[k] becomes s[0] and s[0] becomes s[len-k].
func rotate(s []line, k int) {
	if k <= 0 || k >= len(s) {
		return
	}
	if k == 1 {
		first := s[0]
		copy(s, s[1:])
		s[len(s)-1] = first
		return
	}
	if k == len(s)-1 {
		last := s[len(s)-1]
		copy(s[1:], s)
		s[0] = last
		return
	}
	var stack [64]line
	tmp := stack[:0]
	if k > len(stack) {
		tmp = make([]line, 0, k)
	}
	tmp = append(tmp, s[:k]...)
	copy(s, s[k:])
	copy(s[len(s)-k:], tmp)
}

func (t *State) modMode(set bool, bit ModeFlag) {
	if set {
		t.mode |= bit
	} else {
		t.mode &^= bit
	}
}

func (t *State) setMode(priv bool, set bool, args []int) {
	if priv {
		for _, a := range args {
			switch a {
			case 1: // DECCKM - cursor key
				t.modMode(set, ModeAppCursor)
			case 5: // DECSCNM - reverse video
				t.modMode(set, ModeReverse)
			case 6: // DECOM - origin
				if set {
					t.cur.State |= cursorOrigin
				} else {
					t.cur.State &^= cursorOrigin
				}
				t.moveAbsTo(0, 0)
			case 7: // DECAWM - auto wrap
				t.modMode(set, ModeWrap)
			// IGNORED:
			case 0, // error
				2,  // DECANM - ANSI/VT52
				3,  // DECCOLM - column
				4,  // DECSCLM - scroll
				8,  // DECARM - auto repeat
				18, // DECPFF - printer feed
				19, // DECPEX - printer extent
				42, // DECNRCM - national characters
				12: // att610 - start blinking cursor
				break
			case 25: // DECTCEM - text cursor enable mode
				t.modMode(!set, ModeHide)
			case 9: // X10 mouse compatibility mode
				t.modMode(false, ModeMouseMask)
				t.modMode(set, ModeMouseX10)
			case 1000: // report button press
				t.modMode(false, ModeMouseMask)
				t.modMode(set, ModeMouseButton)
			case 1002: // report motion on button press
				t.modMode(false, ModeMouseMask)
				t.modMode(set, ModeMouseMotion)
			case 1003: // enable all mouse motions
				t.modMode(false, ModeMouseMask)
				t.modMode(set, ModeMouseMany)
			case 1004: // send focus events to tty
				t.modMode(set, ModeFocus)
			case 1006: // extended reporting mode
				t.modMode(set, ModeMouseSgr)
			case 1034:
				t.modMode(set, Mode8bit)
			case 1049:
				// As xterm: save the cursor, go to the alternate screen and
				// clear it; on the way back, return to the main screen and
				// restore the cursor. Upstream saved after switching,
				// did not clear on the way in, and on a reset while
				// already on the main screen switched to the alternate one.
				if set {
					t.saveCursor()
					if t.mode&ModeAltScreen == 0 {
						t.swapScreen()
					}
					t.clear(0, 0, t.cols-1, t.rows-1)
				} else {
					if t.mode&ModeAltScreen != 0 {
						t.clear(0, 0, t.cols-1, t.rows-1)
						t.swapScreen()
					}
					t.restoreCursor()
				}
			case 47, 1047:
				alt := t.mode&ModeAltScreen != 0
				if alt {
					t.clear(0, 0, t.cols-1, t.rows-1)
				}
				if !set || !alt {
					t.swapScreen()
				}
			case 1048:
				if set {
					t.saveCursor()
				} else {
					t.restoreCursor()
				}
			case 1001:
				// mouse highlight mode; can hang the terminal by design when
				// implemented
			case 1005:
				// utf8 mouse mode; will confuse applications not supporting
				// utf8 and luit
			case 1015:
				// urxvt mangled mouse mode; incompatiblt and can be mistaken
				// for other control codes
			default:
				t.logf("unknown private set/reset mode %d\n", a)
			}
		}
	} else {
		for _, a := range args {
			switch a {
			case 0: // Error (ignored)
			case 2: // KAM - keyboard action
				t.modMode(set, ModeKeyboardLock)
			case 4: // IRM - insertion-replacement
				t.modMode(set, ModeInsert)
				t.logln("insert mode not implemented")
			case 12: // SRM - send/receive
				t.modMode(set, ModeEcho)
			case 20: // LNM - linefeed/newline
				t.modMode(set, ModeCRLF)
			case 34:
				t.logln("right-to-left mode not implemented")
			case 96:
				t.logln("right-to-left copy mode not implemented")
			default:
				t.logf("unknown set/reset mode %d\n", a)
			}
		}
	}
}

func (t *State) setAttr(attr []int) {
	if len(attr) == 0 {
		attr = []int{0}
	}
	for i := 0; i < len(attr); i++ {
		a := attr[i]
		switch a {
		case 0:
			t.cur.Attr.Mode &^= attrReverse | attrUnderline | attrBold | attrItalic | attrBlink
			t.cur.Attr.FG = DefaultFG
			t.cur.Attr.BG = DefaultBG
		case 1:
			t.cur.Attr.Mode |= attrBold
		case 3:
			t.cur.Attr.Mode |= attrItalic
		case 4:
			t.cur.Attr.Mode |= attrUnderline
		case 5, 6: // slow, rapid blink
			t.cur.Attr.Mode |= attrBlink
		case 7:
			t.cur.Attr.Mode |= attrReverse
		case 21, 22:
			t.cur.Attr.Mode &^= attrBold
		case 23:
			t.cur.Attr.Mode &^= attrItalic
		case 24:
			t.cur.Attr.Mode &^= attrUnderline
		case 25, 26:
			t.cur.Attr.Mode &^= attrBlink
		case 27:
			t.cur.Attr.Mode &^= attrReverse
		case 38:
			if i+2 < len(attr) && attr[i+1] == 5 {
				i += 2
				if between(attr[i], 0, 255) {
					t.cur.Attr.FG = Color(attr[i])
				} else {
					t.logf("bad fgcolor %d\n", attr[i])
				}
			} else if i+4 < len(attr) && attr[i+1] == 2 {
				i += 4
				r, g, b := attr[i-2], attr[i-1], attr[i]
				if !between(r, 0, 255) || !between(g, 0, 255) || !between(b, 0, 255) {
					t.logf("bad fg rgb color (%d,%d,%d)\n", r, g, b)
				} else {
					t.cur.Attr.FG = Color(r<<16 | g<<8 | b)
				}
			} else {
				t.logf("gfx attr %d unknown\n", a)
			}
		case 39:
			t.cur.Attr.FG = DefaultFG
		case 48:
			if i+2 < len(attr) && attr[i+1] == 5 {
				i += 2
				if between(attr[i], 0, 255) {
					t.cur.Attr.BG = Color(attr[i])
				} else {
					t.logf("bad bgcolor %d\n", attr[i])
				}
			} else if i+4 < len(attr) && attr[i+1] == 2 {
				i += 4
				r, g, b := attr[i-2], attr[i-1], attr[i]
				if !between(r, 0, 255) || !between(g, 0, 255) || !between(b, 0, 255) {
					t.logf("bad bg rgb color (%d,%d,%d)\n", r, g, b)
				} else {
					t.cur.Attr.BG = Color(r<<16 | g<<8 | b)
				}
			} else {
				t.logf("gfx attr %d unknown\n", a)
			}
		case 49:
			t.cur.Attr.BG = DefaultBG
		default:
			if between(a, 30, 37) {
				t.cur.Attr.FG = Color(a - 30)
			} else if between(a, 40, 47) {
				t.cur.Attr.BG = Color(a - 40)
			} else if between(a, 90, 97) {
				t.cur.Attr.FG = Color(a - 90 + 8)
			} else if between(a, 100, 107) {
				t.cur.Attr.BG = Color(a - 100 + 8)
			} else {
				t.logf("gfx attr %d unknown\n", a)
			}
		}
	}
}

func (t *State) insertBlanks(n int) {
	src := t.cur.X
	dst := src + n
	size := t.cols - dst
	t.changed |= ChangedScreen
	t.dirty[t.cur.Y] = true

	if dst >= t.cols {
		t.clear(t.cur.X, t.cur.Y, t.cols-1, t.cur.Y)
	} else {
		l := t.lines[t.cur.Y]
		t.unsplit(src, src, t.cur.Y) // a glyph the insertion cuts in two
		copy(l[dst:dst+size], l[src:src+size])
		if lo, hi := l.span(); lo < hi {
			l.setSpan(lo, min(t.cols, hi+n))
		}
		if l[t.cols-1].mode()&attrWide != 0 {
			l[t.cols-1] = halfBlank(l[t.cols-1]) // its other half went off the edge
		}
		erase(l, src, dst-1, t.blank())
	}
}

func (t *State) insertBlankLines(n int) {
	if t.cur.Y < t.top || t.cur.Y > t.bottom {
		return
	}
	t.scrollDown(t.cur.Y, n)
}

func (t *State) deleteLines(n int) {
	if t.cur.Y < t.top || t.cur.Y > t.bottom {
		return
	}
	t.scrollUpRegion(t.cur.Y, n)
}

// scrollUpRegion is scrollUp for lines deleted inside the screen (DL):
// they are gone, not scrolled into the scrollback.
func (t *State) scrollUpRegion(orig, n int) {
	if orig == 0 {
		saved := t.sb.off
		t.sb.off = true
		t.scrollUp(orig, n)
		t.sb.off = saved
		return
	}
	t.scrollUp(orig, n)
}

func (t *State) deleteChars(n int) {
	src := t.cur.X + n
	dst := t.cur.X
	size := t.cols - src
	t.changed |= ChangedScreen
	t.dirty[t.cur.Y] = true

	if src >= t.cols {
		t.clear(t.cur.X, t.cur.Y, t.cols-1, t.cur.Y)
	} else {
		l := t.lines[t.cur.Y]
		t.unsplit(dst, src, t.cur.Y) // glyphs the deleted cells cut in two
		copy(l[dst:dst+size], l[src:src+size])
		if lo, hi := l.span(); lo < hi && lo > dst {
			l.setSpan(max(dst, lo-n), hi)
		}
		erase(l, t.cols-n, t.cols-1, t.blank())
	}
}

func (t *State) setTitle(title string) {
	t.changed |= ChangedTitle
	t.title = title
}

func (t *State) Size() (cols, rows int) {
	return t.cols, t.rows
}

func (t *State) String() string {
	t.Lock()
	defer t.Unlock()

	var view []rune
	for y := 0; y < t.rows; y++ {
		for x := 0; x < t.cols; x++ {
			attr := t.Cell(x, y)
			view = append(view, attr.Char)
		}
		view = append(view, '\n')
	}

	return string(view)
}

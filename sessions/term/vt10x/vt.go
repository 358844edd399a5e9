package vt10x

import (
	"bufio"
	"fmt"
	"io"
)

// Terminal represents the virtual terminal emulator.
type Terminal interface {
	// View displays the virtual terminal.
	View

	// Write parses input and writes terminal changes to state.
	io.Writer

	// Parse blocks on read on pty or io.Reader, then parses sequences until
	// buffer empties. State is locked as soon as first rune is read, and unlocked
	// when buffer is empty.
	Parse(bf *bufio.Reader) error
}

// View represents the view of the virtual terminal emulator.
type View interface {
	// String dumps the virtual terminal contents.
	fmt.Stringer

	// Size returns the size of the virtual terminal.
	Size() (cols, rows int)

	// Resize changes the size of the virtual terminal.
	Resize(cols, rows int)

	// Mode returns the current terminal mode.//
	Mode() ModeFlag

	// Title represents the title of the console window.
	Title() string

	// Cell returns the glyph containing the character code, foreground color, and
	// background color at position (x, y) relative to the top left of the terminal.
	Cell(x, y int) Glyph

	// Cursor returns the current position of the cursor.
	Cursor() Cursor

	// CursorVisible returns the visible state of the cursor.
	CursorVisible() bool

	// Lock locks the state object's mutex.
	Lock()

	// Unlock resets change flags and unlocks the state object's mutex.
	Unlock()

	// The methods below are agentd's; call them with the lock held.

	// Dirty reports whether row y changed since the last Unlock.
	Dirty(y int) bool

	// AppendText appends row y's text, trailing blanks cut and the second
	// cell of each wide glyph left out, and returns the extended buffer.
	AppendText(buf []byte, y int) []byte

	// AppendStyles appends one byte per glyph AppendText gives for row y:
	// its Style bits.
	AppendStyles(buf []byte, y int) []byte

	// AppendANSI appends row y as text and SGR sequences that draw it
	// with its colours and attributes on a terminal in its default state.
	AppendANSI(buf []byte, y int) []byte

	// Scrollback is the number of lines kept above the main screen.
	Scrollback() int

	// AppendScrollback appends scrollback line i (0 is the oldest) as
	// AppendANSI does; with plain set, as AppendText does.
	AppendScrollback(buf []byte, i int, plain bool) []byte

	// AppendRepaint appends bytes that draw the terminal as it is on a
	// blank one of the same size (with history set, scrollback first).
	AppendRepaint(buf []byte, history bool) []byte
}

type TerminalOption func(*TerminalInfo)

type TerminalInfo struct {
	w          io.Writer
	cols, rows int
	scrollback int
}

// WithScrollback keeps up to n bytes of the lines that scroll off the top
// of the main screen (their text and colours, compactly; about a line of
// text's length each). 0, the default, keeps none.
func WithScrollback(n int) TerminalOption {
	return func(info *TerminalInfo) {
		info.scrollback = n
	}
}

func WithWriter(w io.Writer) TerminalOption {
	return func(info *TerminalInfo) {
		info.w = w
	}
}

func WithSize(cols, rows int) TerminalOption {
	return func(info *TerminalInfo) {
		info.cols = cols
		info.rows = rows
	}
}

// New returns a new virtual terminal emulator.
func New(opts ...TerminalOption) Terminal {
	info := TerminalInfo{
		w:    io.Discard,
		cols: 80,
		rows: 24,
	}
	for _, opt := range opts {
		opt(&info)
	}
	return newTerminal(info)
}

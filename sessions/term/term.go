// Package term is agentd's terminal: it feeds an agent's PTY output into a
// vt10x emulator, answers the queries agents wait on, and taps the sequences
// vt10x ignores (title, OSC 7501 program status, OSC 9;4 progress,
// synchronized output, bracketed paste). It renders a detect.Screen.
package term

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/hinshun/vt10x"

	"github.com/agentd/agentd/detect"
)

// maxPending bounds how many bytes of an unfinished escape sequence are held
// back; past it the bytes go to the emulator as they are. Each write scans
// what is held again, so it is kept small: an endless OSC written a byte at
// a time must not cost time that grows with its length squared.
const maxPending = 4 << 10

// Terminal is one emulated terminal. It is safe for concurrent use.
type Terminal struct {
	mu   sync.Mutex
	vt   vt10x.Terminal
	cols int
	rows int

	pending      []byte // an unfinished escape sequence
	pendingSpare []byte // pending's other buffer: the two take turns
	rowBuf       []byte // reused while rendering rows
	// shown is the last Snapshot's rows. Snapshot renders again only the
	// rows vt10x marked dirty since then (see rows.go).
	shown       []string
	shownStyles []string // shown's Style bytes, one per glyph

	title          string
	status         *detect.StatusRecord
	statusSeq      uint64
	progress       detect.Progress
	syncOutput     bool
	framesDone     uint64 // synchronized frames the program released
	bracketedPaste bool
	// answerStatus says whether OSC 7501 queries get answered.
	answerStatus bool

	reply func([]byte) // writes answers to the program; nil drops them
}

// Options configure a Terminal.
type Options struct {
	Cols, Rows int
	// Reply receives the terminal's answers to queries (Device Attributes,
	// cursor position, …). It is called synchronously from Write, in the
	// order the queries appear in the stream.
	Reply func([]byte)
	// NoStatusAnswer leaves the OSC 7501 query unanswered, so a program
	// behaves as in a terminal without the Program Status Protocol.
	NoStatusAnswer bool
	// Scrollback is how many bytes of the lines that scroll off the top
	// of the main screen are kept: 0 means DefaultScrollback, below 0 none.
	Scrollback int
}

// DefaultScrollback keeps about a thousand lines of a typical agent's
// transcript (text and colours, not cells), for a viewer that attaches
// to a running session.
const DefaultScrollback = 64 << 10

// New returns a terminal of the given size.
func New(o Options) *Terminal {
	if o.Cols < 1 {
		o.Cols = 120
	}
	if o.Rows < 1 {
		o.Rows = 40
	}
	if o.Scrollback == 0 {
		o.Scrollback = DefaultScrollback
	}
	t := &Terminal{
		vt:           vt10x.New(vt10x.WithSize(o.Cols, o.Rows), vt10x.WithScrollback(max(o.Scrollback, 0))),
		cols:         o.Cols,
		rows:         o.Rows,
		progress:     detect.Progress{State: -1},
		reply:        o.Reply,
		answerStatus: !o.NoStatusAnswer,
	}
	return t
}

// Resize changes the emulated screen size.
func (t *Terminal) Resize(cols, rows int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cols, t.rows = cols, rows
	t.vt.Resize(cols, rows)
}

// Size returns the screen size.
func (t *Terminal) Size() (cols, rows int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cols, t.rows
}

// InSync reports whether the program holds synchronized output (?2026h):
// its frame is half drawn and must not be classified.
func (t *Terminal) InSync() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.syncOutput
}

// FramesDone counts the frames the program drew in synchronized output
// (?2026h … ?2026l) and released: each release says a frame is whole.
func (t *Terminal) FramesDone() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.framesDone
}

// BracketedPaste reports whether the program enabled bracketed paste.
func (t *Terminal) BracketedPaste() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bracketedPaste
}

// Write feeds program output. It never fails; it always consumes all of p.
func (t *Terminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) > 0 {
		t.pending = append(t.pending, p...)
		buf := t.pending
		t.pending = t.pendingSpare[:0]
		t.pendingSpare = buf
		t.process(buf)
		return len(p), nil
	}
	t.process(p)
	return len(p), nil
}

// process walks buf once. Text and the sequences the emulator handles go
// to it in runs; queries and tapped sequences are cut out and handled in
// stream order. An unfinished escape sequence at the end is kept for the
// next Write. (Runes split across writes and wide glyphs are the
// emulator's own business.)
func (t *Terminal) process(buf []byte) {
	start := 0 // first byte not yet given to the emulator
	i := 0
	for i < len(buf) {
		k := bytes.IndexByte(buf[i:], 0x1b)
		if k < 0 {
			break
		}
		i += k
		end, complete := seqEnd(buf, i)
		if !complete {
			if len(buf)-i <= maxPending {
				t.feed(buf[start:i])
				t.pending = append(t.pending[:0], buf[i:]...)
				return
			}
			break
		}
		if t.handleSeq(buf, start, i, end) {
			start = end
		}
		i = end
	}
	t.feed(buf[start:])
}

func (t *Terminal) feed(b []byte) {
	if len(b) > 0 {
		_, _ = t.vt.Write(b)
	}
}

// handleSeq looks at the complete escape sequence buf[s:e]. It returns true
// when it consumed the sequence (fed what came before it and took care of
// it), false when the sequence can go to the emulator with the text.
func (t *Terminal) handleSeq(buf []byte, start, s, e int) bool {
	seq := buf[s:e]
	if len(seq) < 2 {
		return false
	}
	switch seq[1] {
	case '[':
		return t.handleCSI(buf, start, s, e)
	case ']':
		t.feed(buf[start:s])
		t.handleOSC(seq)
		return true
	case 'c': // RIS: a full reset forgets what the program reported
		t.title = ""
		t.status = nil
		t.progress = detect.Progress{State: -1}
		t.syncOutput = false
		t.bracketedPaste = false
		return false
	}
	return false
}

// handleCSI answers the queries among CSI sequences and notes the modes
// agentd reads; the emulator gets the rest. It looks only at the final
// byte until it knows the sequence matters, and allocates nothing.
func (t *Terminal) handleCSI(buf []byte, start, s, e int) bool {
	seq := buf[s:e]
	final := seq[len(seq)-1]
	switch final {
	case 'c', 'n', 'q', 'p', 'h', 'l':
	default:
		return false
	}
	if len(seq) < 3 {
		return false // cut short by ESC, CAN or SUB: nothing to answer
	}
	body := seq[2 : len(seq)-1]
	var prefix byte
	if len(body) > 0 && body[0] >= '<' && body[0] <= '?' {
		prefix = body[0]
		body = body[1:]
	}
	is := func(s string) bool { return string(body) == s }
	switch {
	case final == 'c' && prefix == 0 && (is("") || is("0")):
		// Device Attributes: a VT220 with ANSI colour.
		t.answer(buf, start, e, "\x1b[?62;22c")
		return true
	case final == 'c' && prefix == '>':
		t.answer(buf, start, e, "\x1b[>0;10;1c")
		return true
	case final == 'n' && prefix == 0 && is("5"):
		t.answer(buf, start, e, "\x1b[0n")
		return true
	case final == 'n' && prefix == 0 && is("6"):
		t.feed(buf[start:e]) // the cursor must be where the program left it
		cur := t.vt.Cursor()
		t.send(fmt.Sprintf("\x1b[%d;%dR", cur.Y+1, cur.X+1))
		return true
	case final == 'q' && prefix == '>':
		t.answer(buf, start, e, "\x1bP>|agentd\x1b\\")
		return true
	case final == 'p' && prefix == '?' && bytes.HasSuffix(body, []byte("$")):
		// DECRQM: only synchronized output is known to be supported.
		mode := body[:len(body)-1]
		state := 0
		if string(mode) == "2026" {
			state = 2
			if t.syncOutput {
				state = 1
			}
		}
		t.answer(buf, start, e, fmt.Sprintf("\x1b[?%s;%d$y", mode, state))
		return true
	case (final == 'h' || final == 'l') && prefix == '?':
		on := final == 'h'
		for len(body) > 0 {
			m := body
			if k := bytes.IndexByte(body, ';'); k >= 0 {
				m, body = body[:k], body[k+1:]
			} else {
				body = nil
			}
			switch string(m) {
			case "2026":
				if t.syncOutput && !on {
					t.framesDone++
				}
				t.syncOutput = on
			case "2004":
				t.bracketedPaste = on
			}
		}
		return false
	}
	return false
}

// answer feeds everything up to the query's end, then replies.
func (t *Terminal) answer(buf []byte, start, e int, reply string) {
	t.feed(buf[start:e])
	t.send(reply)
}

func (t *Terminal) send(s string) {
	if t.reply != nil {
		t.reply([]byte(s))
	}
}

func (t *Terminal) handleOSC(seq []byte) {
	// seq is ESC ] … (BEL | ESC \)
	body := seq[2:]
	term := "\a"
	switch {
	case bytes.HasSuffix(body, []byte("\x1b\\")):
		body = body[:len(body)-2]
		term = "\x1b\\"
	case bytes.HasSuffix(body, []byte("\a")):
		body = body[:len(body)-1]
	default:
		return // cut short by another escape: it says nothing
	}
	cmd, arg, _ := strings.Cut(string(body), ";")
	switch cmd {
	case "0", "2":
		t.title = arg
		// vt10x ignores an empty title; keep its own copy in step anyway.
		_, _ = t.vt.Write(seq)
	case "10", "11", "12":
		if arg == "?" {
			colour := "rgb:d0d0/d0d0/d0d0"
			if cmd == "11" {
				colour = "rgb:1c1c/1c1c/1c1c"
			}
			t.send("\x1b]" + cmd + ";" + colour + term)
		}
	case "9":
		if p, ok := parseProgress(arg); ok {
			t.progress = p
		}
	case "7501":
		if arg == "?" {
			if t.answerStatus {
				t.send("\x1b]7501;?" + term)
			}
			return
		}
		rec, ok := ParseStatus(arg)
		if !ok {
			return
		}
		t.statusSeq++
		if rec.State == "clear" {
			t.status = nil
			return
		}
		t.status = &rec
	}
}

// parseProgress reads ConEmu's `4;state;value` progress report.
func parseProgress(arg string) (detect.Progress, bool) {
	parts := strings.Split(arg, ";")
	if len(parts) < 2 || parts[0] != "4" {
		return detect.Progress{}, false
	}
	st, err := strconv.Atoi(parts[1])
	if err != nil || st < 0 || st > 4 {
		return detect.Progress{}, false
	}
	p := detect.Progress{State: st}
	if len(parts) > 2 {
		if v, err := strconv.Atoi(parts[2]); err == nil && v >= 0 && v <= 100 {
			p.Value = v
		}
	}
	if st == 0 {
		p.State = -1
	}
	return p, true
}

// seqEnd finds the end of the escape sequence starting at buf[i] (an ESC).
// complete is false when buf ends before the sequence does.
func seqEnd(buf []byte, i int) (end int, complete bool) {
	if i+1 >= len(buf) {
		return 0, false
	}
	switch buf[i+1] {
	case '[':
		for j := i + 2; j < len(buf); j++ {
			if b := buf[j]; b >= 0x40 && b <= 0x7e {
				return j + 1, true
			}
			if buf[j] == 0x1b || buf[j] == 0x18 || buf[j] == 0x1a {
				return j, true // aborted sequence: let vt10x see the rest
			}
		}
		return 0, false
	case ']', 'P', '_', '^', 'X':
		for j := i + 2; j < len(buf); j++ {
			switch buf[j] {
			case 0x07:
				if buf[i+1] == ']' {
					return j + 1, true
				}
			case 0x1b:
				if j+1 >= len(buf) {
					return 0, false
				}
				if buf[j+1] == '\\' {
					return j + 2, true
				}
				return j, true
			}
		}
		return 0, false
	case '(', ')', '*', '+', '#', ' ', '%':
		if i+2 >= len(buf) {
			return 0, false
		}
		return i + 3, true
	}
	return i + 2, true
}

// Snapshot renders the screen as a person sees it. It must be the only
// caller of vt10x's Lock/Unlock: Unlock clears the dirty rows it relies on.
func (t *Terminal) Snapshot() detect.Screen { return t.snapshot(false) }

// SnapshotAll is Snapshot rendering every row, changed or not: the work of
// a renderer that does not know what changed (agentd --detect-poll, the
// 50 ms poll the benchmarks compare against).
func (t *Terminal) SnapshotAll() detect.Screen { return t.snapshot(true) }

func (t *Terminal) snapshot(all bool) detect.Screen {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.vt.Lock()
	defer t.vt.Unlock()
	cols, rows := t.vt.Size()
	s := detect.Screen{
		Cols:          cols,
		Rows:          rows,
		Lines:         make([]string, rows),
		CursorVisible: t.vt.CursorVisible(),
		Title:         t.title,
		AltScreen:     t.vt.Mode()&vt10x.ModeAltScreen != 0,
		Progress:      t.progress,
	}
	cur := t.vt.Cursor()
	s.CursorRow, s.CursorCol = cur.Y, cur.X
	if t.status != nil {
		rec := *t.status
		s.Status = &rec
	}
	s.StatusSeq = t.statusSeq
	t.renderRows(rows, all)
	copy(s.Lines, t.shown)
	s.Styles = make([]string, rows)
	copy(s.Styles, t.shownStyles)
	return s
}

// Repaint returns bytes that draw the terminal as it is on a blank one of
// the same size: what a new viewer needs before live output. With history
// set, the scrollback comes first, so a view opened on a running session
// can scroll back through it; a viewer that only missed some output gets
// the screen alone.
func (t *Terminal) Repaint(history bool) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	buf := t.vt.AppendRepaint(nil, history)
	if t.bracketedPaste {
		buf = append(buf, "\x1b[?2004h"...)
	}
	return buf
}

// Render feeds raw program output into a fresh terminal of the given size
// and returns the screen it leaves. Queries in the output are not answered.
func Render(raw []byte, cols, rows int) detect.Screen {
	t := New(Options{Cols: cols, Rows: rows})
	t.Write(raw)
	return t.Snapshot()
}

package term

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSplitRuneAcrossWrites(t *testing.T) {
	tm := New(Options{Cols: 20, Rows: 3})
	b := []byte("a❯b")
	for i := range b {
		tm.Write(b[i : i+1])
	}
	if got := tm.Snapshot().Lines[0]; got != "a❯b" {
		t.Fatalf("row 0 = %q, want %q", got, "a❯b")
	}
}

func TestWideGlyphKeepsColumns(t *testing.T) {
	tm := New(Options{Cols: 20, Rows: 3})
	tm.Write([]byte("你好x\r\n\x1b[2;5Hy"))
	s := tm.Snapshot()
	if s.Lines[0] != "你好x" {
		t.Fatalf("row 0 = %q", s.Lines[0])
	}
	// x sits at column 4 as in a real terminal: the cursor after it is at 5.
	tm.Write([]byte("\x1b[1;6Hz"))
	if got := tm.Snapshot().Lines[0]; got != "你好xz" {
		t.Fatalf("row 0 after absolute write = %q", got)
	}
}

func TestQueriesAnsweredInOrder(t *testing.T) {
	var replies []string
	tm := New(Options{Cols: 40, Rows: 5, Reply: func(b []byte) { replies = append(replies, string(b)) }})
	tm.Write([]byte("\x1b[>0q\x1b[?u\x1b]7501;?\a\x1b[c"))
	tm.Write([]byte("ab\x1b[6n"))
	want := []string{"\x1bP>|agentd\x1b\\", "\x1b]7501;?\a", "\x1b[?62;22c", "\x1b[1;3R"}
	if strings.Join(replies, "|") != strings.Join(want, "|") {
		t.Fatalf("replies %q, want %q", replies, want)
	}
	// ESC[?u must not move the cursor (vt10x alone reads it as restore-cursor).
	if got := tm.Snapshot().Lines[0]; got != "ab" {
		t.Fatalf("row 0 = %q", got)
	}
}

func TestSequenceSplitAcrossWrites(t *testing.T) {
	var replies []string
	tm := New(Options{Cols: 40, Rows: 5, Reply: func(b []byte) { replies = append(replies, string(b)) }})
	seq := []byte("\x1b]0;hello\a\x1b]7501;state=working:app=codex\x1b\\\x1b[")
	for i := range seq {
		tm.Write(seq[i : i+1])
	}
	tm.Write([]byte("c"))
	s := tm.Snapshot()
	if s.Title != "hello" {
		t.Fatalf("title %q", s.Title)
	}
	if s.Status == nil || s.Status.State != "working" || s.Status.App != "codex" {
		t.Fatalf("status %+v", s.Status)
	}
	if len(replies) != 1 {
		t.Fatalf("replies %q", replies)
	}
}

func TestStatusClearAndInvalid(t *testing.T) {
	tm := New(Options{Cols: 40, Rows: 5})
	tm.Write([]byte("\x1b]7501;state=blocked:app=claude-code:kind=permission:msg=YXBwcm92ZSBCYXNo\a"))
	s := tm.Snapshot()
	if s.Status == nil || s.Status.Message != "approve Bash" || s.Status.Kind != "permission" {
		t.Fatalf("status %+v", s.Status)
	}
	tm.Write([]byte("\x1b]7501;state=dancing:app=x\a"))
	if tm.Snapshot().Status.State != "blocked" {
		t.Fatal("an unknown state changed the record")
	}
	tm.Write([]byte("\x1b]7501;state=clear:app=claude-code\a"))
	if tm.Snapshot().Status != nil {
		t.Fatal("clear kept the record")
	}
}

func TestSyncAndPasteModes(t *testing.T) {
	tm := New(Options{Cols: 40, Rows: 5})
	tm.Write([]byte("\x1b[?2026h\x1b[?2004h"))
	if !tm.InSync() || !tm.BracketedPaste() {
		t.Fatal("modes not tracked")
	}
	if tm.FramesDone() != 0 {
		t.Fatal("a frame counted as done before its end")
	}
	tm.Write([]byte("\x1b[?2026l"))
	if tm.InSync() {
		t.Fatal("sync not cleared")
	}
	// An end without a start, and a start repeated, release no frame.
	tm.Write([]byte("\x1b[?2026l\x1b[?2026h\x1b[?2026hx\x1b[?2026l"))
	if got := tm.FramesDone(); got != 2 {
		t.Fatalf("FramesDone = %d after two released frames, want 2", got)
	}
}

// Counts that would make vt10x loop for minutes or index out of range are
// lowered or dropped before it sees them.
func TestHostileCSI(t *testing.T) {
	tm := New(Options{Cols: 20, Rows: 3})
	done := make(chan struct{})
	go func() {
		tm.Write([]byte("ab\x1b[999999999999I\x1b[4000000000Z\x1b[-5@\x1b[-3P\x1b[+2Lcd"))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("a huge tab count kept the emulator busy")
	}
	// Nine thousand tabs forward, as many back, then "cd" over "ab".
	if got := tm.Snapshot().Lines[0]; got != "cd" {
		t.Fatalf("row 0 = %q", got)
	}
}

// TestIncrementalSnapshot: rendering only the rows vt10x marked dirty gives
// the same screens (text and styles) as rendering every row, snapshot after
// snapshot, on every recorded session cut into PTY-sized reads (with a
// resize half-way through).
func TestIncrementalSnapshot(t *testing.T) {
	files, _ := filepath.Glob("../../fixtures/*/*/sessions/*.raw")
	if len(files) == 0 {
		t.Skip("no session recordings under fixtures/")
	}
	for i, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inc := New(Options{Cols: 120, Rows: 40})
		ref := New(Options{Cols: 120, Rows: 40})
		step := []int{4096, 1000, 97, 13}[i%4]
		for off, n := 0, 0; off < len(raw); off, n = off+step, n+1 {
			chunk := raw[off:min(off+step, len(raw))]
			inc.Write(chunk)
			ref.Write(chunk)
			if off <= len(raw)/2 && off+step > len(raw)/2 {
				inc.Resize(100, 30)
				ref.Resize(100, 30)
			}
			if n%3 == 2 {
				continue // let dirty marks pile up between snapshots too
			}
			a, b := inc.Snapshot(), ref.SnapshotAll()
			if !slices.Equal(a.Lines, b.Lines) || !slices.Equal(a.Styles, b.Styles) {
				for y := range a.Lines {
					if y < len(b.Lines) && (a.Lines[y] != b.Lines[y] || a.Styles[y] != b.Styles[y]) {
						t.Fatalf("%s at byte %d, row %d:\nincremental %q %q\nfull        %q %q", f, off, y, a.Lines[y], a.Styles[y], b.Lines[y], b.Styles[y])
					}
				}
				t.Fatalf("%s at byte %d: %d rows against %d", f, off, len(a.Lines), len(b.Lines))
			}
		}
	}
}

package term

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzTerminal: any bytes, split anywhere, render the same screen as the same
// bytes in one write, and nothing panics. Splits land inside UTF-8 runes
// and escape sequences, as PTY reads do.
func FuzzTerminal(f *testing.F) {
	files, _ := filepath.Glob("../../fixtures/*/*/blocked/*.raw")
	for _, p := range files[:min(len(files), 8)] {
		if raw, err := os.ReadFile(p); err == nil {
			f.Add(raw[max(0, len(raw)-512):], uint16(7))
		}
	}
	f.Add([]byte("a❯b\x1b]0;title\a\x1b[?2026h\x1b]7501;state=blocked:app=x\x1b\\你好\x1b[6n"), uint16(1))
	f.Add([]byte("\x1b[38:2::255:0:0mred\x1b[0m\x1bP>|x\x1b\\\xff\xfe"), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, step uint16) {
		if len(data) > 1<<16 {
			return
		}
		whole := New(Options{Cols: 40, Rows: 10, Reply: func([]byte) {}})
		whole.Write(data)
		split := New(Options{Cols: 40, Rows: 10, Reply: func([]byte) {}})
		n := int(step%13) + 1
		for i := 0; i < len(data); i += n {
			split.Write(data[i:min(i+n, len(data))])
		}
		a, b := whole.Snapshot(), split.Snapshot()
		if !slices.Equal(a.Lines, b.Lines) || a.Title != b.Title || a.CursorRow != b.CursorRow || a.CursorCol != b.CursorCol {
			t.Fatalf("split every %d bytes renders differently:\nwhole %q %q\nsplit %q %q", n, a.Lines, a.Title, b.Lines, b.Title)
		}
	})
}

// FuzzParseStatus: no record crashes the OSC 7501 parser, and an accepted
// record has a known state.
func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{"state=blocked:app=claude-code:kind=permission:msg=YXBwcm92ZQ==", "state=idle:app=codex", "state=done:progress=50:id=/x", "?", "state=:app=", "msg=%%%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		rec, ok := ParseStatus(body)
		if ok && !statusStates[rec.State] {
			t.Fatalf("accepted unknown state %q", rec.State)
		}
	})
}

//go:build unix

package forward

import (
	"bytes"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

func frame(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// The editor's bytes reach the daemon unchanged, and only a real exit
// notification is noted as one: not a request named exit, not a longer
// frame that mentions it, nor one after bytes it could not frame, which
// it passes on as they are.
func TestCopyEditorPassesBytesAndNotesExit(t *testing.T) {
	exitFrame := frame(`{"jsonrpc":"2.0","method":"exit"}`)
	for _, c := range []struct {
		name    string
		in, out string // out: what the daemon gets, where it is not in
		exit    bool
	}{
		{"exit notification", exitFrame, "", true},
		{"exit with an id is a request", frame(`{"jsonrpc":"2.0","id":1,"method":"exit"}`), "", false},
		{"a long frame", frame(`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{"note":"` + strings.Repeat("exit ", 20) + `"}}`), "", false},
		{"a blank line before a frame is dropped", "\r\n" + exitFrame, exitFrame, true},
		{"a header that does not make sense", "nonsense\r\n\r\n" + exitFrame, "", false},
		{"a length past the limit", "Content-Length: 999999999999\r\n\r\n" + exitFrame, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			var exit atomic.Bool
			if err := copyEditor(&out, strings.NewReader(c.in), &exit); err != nil {
				t.Fatalf("copyEditor: %v", err)
			}
			want := c.out
			if want == "" {
				want = c.in
			}
			if out.String() != want {
				t.Errorf("the daemon got %q, want %q", out.String(), want)
			}
			if exit.Load() != c.exit {
				t.Errorf("exit noted: %v, want %v", exit.Load(), c.exit)
			}
		})
	}
}

package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// FuzzLineStream: no byte stream from an agent crashes the ACP message
// reader; every message it yields is valid JSON no longer than its limit,
// and it always ends (at EOF).
func FuzzLineStream(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"sessionId":"s"}}`+"\n"), uint16(200))
	f.Add([]byte("Debugger listening on ws://127.0.0.1\n{\"jsonrpc\":\"2.0\",\"method\":\"session/update\"}\r\n[1,2"), uint16(8))
	f.Add([]byte(strings.Repeat("x", 300)+"\n{}\n\n\n{\"a\":"), uint16(64))
	f.Add([]byte("\xff\xfe{\"id\":1}\x00\n\"str\"\n"), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, max uint16) {
		limit := int(max%512) + 16
		st := newLineStream(io.NopCloser(bytes.NewReader(data)), nopWriteCloser{}, slog.New(slog.NewTextHandler(io.Discard, nil)), limit)
		for range len(data) + 2 {
			var v json.RawMessage
			if err := st.ReadObject(&v); err != nil {
				return
			}
			if !json.Valid(v) {
				t.Fatalf("yielded invalid JSON %q", v)
			}
			if len(v) > limit {
				t.Fatalf("yielded %d bytes, over the limit of %d", len(v), limit)
			}
		}
		t.Fatal("the reader did not reach the end of the stream")
	})
}

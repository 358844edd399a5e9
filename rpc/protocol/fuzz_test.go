package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"
)

// FuzzFraming: no byte stream crashes the reader; every message it yields
// is a JSON object, and it always ends (at EOF).
func FuzzFraming(f *testing.F) {
	f.Add([]byte(frame(`{"jsonrpc":"2.0","id":1,"method":"session/list"}`)))
	f.Add([]byte("Content-Length: 5\r\n\r\n{\"a\":Content-Length: x\r\n\r\n"))
	f.Add([]byte("garbage\r\n\r\nContent-Length: 99999999999\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st := NewStream(bytes.NewReader(data), io.Discard, nil)
		st.max = 1 << 12
		for range 1000 {
			var v json.RawMessage
			if err := st.ReadObject(&v); err != nil {
				return
			}
			if !json.Valid(v) {
				t.Fatalf("yielded invalid JSON %q", v)
			}
		}
	})
}

func frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

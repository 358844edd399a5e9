package vt10x

import (
	"bytes"
	"testing"
)

// BenchmarkYes is `yes` in a 120x40 terminal with agentd's scrollback:
// every line scrolls the whole screen.
func BenchmarkYes(b *testing.B) {
	data := bytes.Repeat([]byte("y\n"), 2048)
	t := New(WithSize(120, 40), WithScrollback(64<<10))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		t.Write(data)
	}
}

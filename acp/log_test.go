package acp

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
)

// testLogger logs to t.Log until the test ends (goroutines that outlive
// the test, such as a stderr reader, must not call t.Log afterwards).
// It also keeps every line, for tests that check what was logged.
func testLogger(t *testing.T) *slog.Logger {
	h := &tlogHandler{st: &tlogState{t: t}}
	t.Cleanup(func() {
		h.st.mu.Lock()
		h.st.done = true
		h.st.mu.Unlock()
	})
	return slog.New(h)
}

type tlogState struct {
	mu   sync.Mutex
	t    *testing.T
	done bool
	all  bytes.Buffer
}

type tlogHandler struct {
	st    *tlogState
	attrs []slog.Attr
}

func (h *tlogHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *tlogHandler) Handle(_ context.Context, r slog.Record) error {
	var b bytes.Buffer
	b.WriteString(r.Level.String() + " " + r.Message)
	for _, a := range h.attrs {
		b.WriteString(" " + a.String())
	}
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	h.st.all.Write(b.Bytes())
	h.st.all.WriteByte('\n')
	if !h.st.done {
		h.st.t.Log(b.String())
	}
	return nil
}

func (h *tlogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &tlogHandler{st: h.st, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *tlogHandler) WithGroup(string) slog.Handler { return h }

// logged returns everything a testLogger logged so far.
func logged(l *slog.Logger) string {
	h := l.Handler().(*tlogHandler)
	h.st.mu.Lock()
	defer h.st.mu.Unlock()
	return h.st.all.String()
}

package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// rawConn talks to a Server in this process over pipes, byte for byte, so
// malformed input can be sent as it is.
type rawConn struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Reader
}

func serve(t *testing.T) *rawConn {
	t.Helper()
	rules, _ := detect.Load(nil, "")
	srv := NewServer(sessions.Options{Rules: rules}, Config{Version: "test", Private: true, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() { _ = srv.Serve(context.Background(), inR, outW); close(done) }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("server did not stop after stdin closed")
		}
	})
	return &rawConn{t: t, in: inW, out: bufio.NewReader(outR)}
}

func (c *rawConn) send(raw string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, raw); err != nil {
		c.t.Fatal(err)
	}
}

func frame(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// next reads one framed message.
func (c *rawConn) next() map[string]any {
	c.t.Helper()
	type result struct {
		m   map[string]any
		err error
	}
	ch := make(chan result, 1)
	go func() {
		n := -1
		for {
			line, err := c.out.ReadString('\n')
			if err != nil {
				ch <- result{err: err}
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c.out, body); err != nil {
			ch <- result{err: err}
			return
		}
		var m map[string]any
		ch <- result{m: m, err: json.Unmarshal(body, &m)}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			c.t.Fatal(r.err)
		}
		return r.m
	case <-time.After(5 * time.Second):
		c.t.Fatal("no message from the server within 5s")
	}
	return nil
}

// Each bad message gets an error that names the problem, and the server
// keeps serving: the request after it is answered.
func TestBadInputIsAnsweredAndServingGoesOn(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":9,"method":"session/list","params":{"pad":"` + strings.Repeat("x", protocol.MaxMessage) + `"}}`
	tests := []struct {
		name, raw string
		code      float64
		msg       string
		id        any
	}{
		{"not JSON", frame(`{"jsonrpc":"2.0","id":1,"method":`), protocol.CodeParseError, "not valid JSON", nil},
		{"no Content-Length", "Content-Type: x\r\n\r\n", protocol.CodeParseError, "without a Content-Length", nil},
		{"bad Content-Length", "Content-Length: lots\r\n\r\n", protocol.CodeParseError, `bad Content-Length "lots"`, nil},
		{"garbage header line", "hello there\r\n", protocol.CodeParseError, "malformed header line", nil},
		{"over the size limit", frame(big), protocol.CodeInvalidRequest, "over the limit", nil},
		{"not a request", frame(`{"jsonrpc":"2.0","id":4}`), protocol.CodeInvalidRequest, "invalid request", float64(4)},
		{"unknown method", frame(`{"jsonrpc":"2.0","id":5,"method":"session/dance"}`), protocol.CodeMethodNotFound, `method "session/dance" not found`, float64(5)},
		{"wrong param type", frame(`{"jsonrpc":"2.0","id":6,"method":"session/resize","params":{"sessionId":"s1","cols":"wide","rows":3}}`), protocol.CodeInvalidParams, "params.cols: want int, got string", float64(6)},
		{"missing params", frame(`{"jsonrpc":"2.0","id":7,"method":"session/read"}`), protocol.CodeInvalidParams, "params are required", float64(7)},
		{"missing session id", frame(`{"jsonrpc":"2.0","id":8,"method":"session/read","params":{}}`), protocol.CodeInvalidParams, "params.sessionId is required", float64(8)},
		{"unknown session", frame(`{"jsonrpc":"2.0","id":10,"method":"runtime_answer","params":{"sessionId":"s99","promptId":"p","optionId":"1"}}`), protocol.CodeSessionNotFound, `no session "s99"`, float64(10)},
		{"missing program", frame(`{"jsonrpc":"2.0","id":11,"method":"session/spawn","params":{"argv":["no-such-agent-xyz"],"cwd":"/"}}`), protocol.CodeSpawnFailed, `program "no-such-agent-xyz" not found`, float64(11)},
		{"missing cwd", frame(`{"jsonrpc":"2.0","id":12,"method":"session/spawn","params":{"argv":["true"],"cwd":"/no/such/dir"}}`), protocol.CodeSpawnFailed, `cwd "/no/such/dir" is not a directory`, float64(12)},
		{"absurd size", frame(`{"jsonrpc":"2.0","id":13,"method":"session/spawn","params":{"argv":["true"],"cwd":"/","cols":100000,"rows":0}}`), protocol.CodeSpawnFailed, "cols and rows must be between 2 and 1000", float64(13)},
		{"bad protocol", frame(`{"jsonrpc":"2.0","id":14,"method":"session/spawn","params":{"argv":["true"],"protocol":"telnet"}}`), protocol.CodeInvalidParams, `params.protocol "telnet"`, float64(14)},
	}
	c := serve(t)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			c.send(tc.raw)
			m := c.next()
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != tc.code || !strings.Contains(fmt.Sprint(e["message"]), tc.msg) {
				t.Fatalf("reply %v, want error %v containing %q", m, tc.code, tc.msg)
			}
			if m["id"] != tc.id {
				t.Errorf("reply id %v, want %v", m["id"], tc.id)
			}
			// Still serving.
			c.send(frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/list"}`, 1000+i)))
			if r := c.next(); r["id"] != float64(1000+i) || r["result"] == nil {
				t.Fatalf("after %s: %v", tc.name, r)
			}
		})
	}
}

// Methods without a result answer "result": null, which Neovim needs.
func TestNullResults(t *testing.T) {
	c := serve(t)
	c.send(frame(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`))
	m := c.next()
	if v, ok := m["result"]; !ok || v != nil {
		t.Fatalf("shutdown reply %v, want result null", m)
	}
}

// An error to the very first request, which can be dispatched before Serve
// has its connection, is answered (it once crashed agentd: found by the
// Neovim client, whose empty table encodes as []).
func TestErrorOnFirstRequest(t *testing.T) {
	for range 30 {
		c := serve(t)
		c.send(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"nvim"},"capabilities":[]}}`))
		m := c.next()
		if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(protocol.CodeInvalidParams) {
			t.Fatalf("reply %v, want invalid params", m)
		}
	}
}

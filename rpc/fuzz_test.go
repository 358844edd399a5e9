package rpc

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// FuzzParams: no params, of any shape, crash a method handler; every
// error is one of the protocol's codes (never an internal error), and an
// invalid-params error names the method. Every method of methodTable is
// fuzzed but session/spawn and the lifecycle ones, which start and end
// real processes (or the daemon).
func FuzzParams(f *testing.F) {
	var methods []string
	for name := range methodTable {
		switch name {
		case protocol.MethodSpawn, protocol.MethodShutdown, protocol.MethodStop, protocol.MethodUpgrade:
		default:
			methods = append(methods, name)
		}
	}
	slices.Sort(methods)
	for i, p := range []string{`{"sessionId":"s1"}`, `{"sessionId":"s1","cols":0,"rows":-1}`, `null`, `[]`, `"x"`,
		`{"sessionId":1}`, `{"sessionId":"s1","promptId":5}`, `{"clientInfo":{"name":3}}`, `{"capabilities":[]}`,
		`{"sessionId":"s1","signal":"SIGFOO"}`, `{"sessionId":{"a":[1]}}`, `{"sessionId":"","data":"\u0000"}`} {
		f.Add(uint8(i), []byte(p))
	}
	rules, _ := detect.Load(nil, "")
	srv := NewServer(sessions.Options{Rules: rules}, Config{Version: "fuzz", Private: true, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	c := &clientConn{srv: srv, exit: make(chan struct{}), attention: sessions.NewAttention(0), watching: map[string]bool{}}
	known := map[int64]bool{protocol.CodeInvalidParams: true, protocol.CodeSessionNotFound: true, protocol.CodeSessionExited: true, protocol.CodeNotSupported: true}
	f.Fuzz(func(t *testing.T, m uint8, params []byte) {
		method := methods[int(m)%len(methods)]
		raw := json.RawMessage(params)
		req := &jsonrpc2.Request{Method: method, ID: jsonrpc2.ID{Num: 1}}
		if json.Valid(params) {
			req.Params = &raw
		}
		_, err := methodTable[method].serve(srv, context.Background(), c, req)
		if err == nil {
			return
		}
		e := errorFor(err)
		if !known[e.Code] {
			t.Fatalf("%s %s: error %d %q", method, params, e.Code, e.Message)
		}
		if e.Code == protocol.CodeInvalidParams && !strings.HasPrefix(e.Message, method+":") {
			t.Fatalf("%s %s: invalid params %q does not name the method", method, params, e.Message)
		}
	})
}

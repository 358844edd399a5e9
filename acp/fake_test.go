package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/sessions/program"
)

// fakeAgent is an ACP agent played by the test itself, in a goroutine,
// over io.Pipe — a FAKE. It exists to do what real agents rarely or never
// do on cue (send updates before session/new answers, print garbage on
// stdout, use request id 0 for everything, die while a permission is
// open, never answer), so the client's handling of those cases can be
// tested. The real agents are exercised in agents_test.go.
type fakeAgent struct {
	t *testing.T

	toAgent   *io.PipeReader // what the client writes
	toAgentW  *io.PipeWriter
	fromAgent *io.PipeWriter // what the client reads
	fromR     *io.PipeReader
	stderr    *io.PipeWriter
	stderrR   *io.PipeReader

	lines chan wire
	exit  chan Exit
	once  sync.Once
}

// wire is one message as the fake sees it.
type wire struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
	Line string `json:"-"`
}

func newFakeAgent(t *testing.T) *fakeAgent {
	f := &fakeAgent{t: t, lines: make(chan wire, 100), exit: make(chan Exit, 1)}
	f.toAgent, f.toAgentW = io.Pipe()
	f.fromR, f.fromAgent = io.Pipe()
	f.stderrR, f.stderr = io.Pipe()
	go func() {
		sc := bufio.NewScanner(f.toAgent)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var w wire
			if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
				t.Errorf("fake agent: the client wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			w.Line = sc.Text()
			f.lines <- w
		}
		close(f.lines)
	}()
	return f
}

// The fake's process side (the process interface).
func (f *fakeAgent) pid() int { return 4242 }

func (f *fakeAgent) wait() Exit { return <-f.exit }

func (f *fakeAgent) signal(sig syscall.Signal) {
	f.die(Exit{Code: -1, Signal: program.SignalName(sig), Err: fmt.Errorf("signal: %s", program.SignalName(sig))})
}

// die ends the fake "process": its pipes close and wait returns e.
func (f *fakeAgent) die(e Exit) {
	f.once.Do(func() {
		f.fromAgent.Close()
		f.stderr.Close()
		f.toAgent.Close()
		f.exit <- e
	})
}

// exitCode makes the fake exit by itself with code.
func (f *fakeAgent) exitCode(code int) {
	var err error
	if code != 0 {
		err = fmt.Errorf("exit status %d", code)
	}
	f.die(Exit{Code: code, Err: err})
}

// recv returns the client's next message (failing the test after 5 s).
func (f *fakeAgent) recv() wire {
	select {
	case w, ok := <-f.lines:
		if !ok {
			f.t.Errorf("fake agent: the client closed its side")
		}
		return w
	case <-time.After(5 * time.Second):
		f.t.Errorf("fake agent: nothing from the client for 5 s")
		return wire{}
	}
}

// tryRecv is recv for a client that may have gone away by design.
func (f *fakeAgent) tryRecv() (wire, bool) {
	select {
	case w, ok := <-f.lines:
		return w, ok
	case <-time.After(5 * time.Second):
		return wire{}, false
	}
}

// expect receives a message and checks its method.
func (f *fakeAgent) expect(method string) wire {
	f.t.Helper()
	w := f.recv()
	if w.Method != method {
		f.t.Errorf("fake agent: got %q, want method %s", w.Line, method)
	}
	return w
}

// line writes one raw line to the client.
func (f *fakeAgent) line(s string) {
	_, _ = io.WriteString(f.fromAgent, s+"\n")
}

func (f *fakeAgent) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		f.t.Errorf("fake agent: %v", err)
		return
	}
	f.line(string(b))
}

func (f *fakeAgent) reply(id json.RawMessage, result any) {
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (f *fakeAgent) replyError(id json.RawMessage, code int, msg string) {
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
}

func (f *fakeAgent) request(id any, method string, params any) {
	f.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

func (f *fakeAgent) notify(method string, params any) {
	f.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (f *fakeAgent) update(sid string, u map[string]any) {
	f.notify("session/update", map[string]any{"sessionId": sid, "update": u})
}

func (f *fakeAgent) textChunk(sid, text string) {
	f.update(sid, map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text}})
}

// initialize answers the client's initialize and returns its params.
func (f *fakeAgent) initialize() json.RawMessage {
	w := f.expect("initialize")
	f.reply(w.ID, map[string]any{
		"protocolVersion":   1,
		"agentCapabilities": map[string]any{"loadSession": false},
		"agentInfo":         map[string]any{"name": "fake", "version": "0.0.1"},
		"authMethods":       []any{},
	})
	return w.Params
}

// handshake answers initialize and session/new with session id sid.
func (f *fakeAgent) handshake(sid string) {
	f.initialize()
	w := f.expect("session/new")
	f.reply(w.ID, map[string]any{"sessionId": sid})
}

// permissionOptions are Claude Code ACP's options (a real agent's ids).
var permissionOptions = []map[string]any{
	{"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
	{"optionId": "allow", "name": "Allow", "kind": "allow_once"},
	{"optionId": "reject", "name": "Reject", "kind": "reject_once"},
}

func (f *fakeAgent) askPermission(id any, sid, toolCallID string, opts []map[string]any) {
	f.request(id, "session/request_permission", map[string]any{
		"sessionId": sid,
		"toolCall":  map[string]any{"toolCallId": toolCallID, "title": "touch marker.txt", "kind": "execute"},
		"options":   opts,
	})
}

// startFake starts a Client on a fake agent; script plays the agent.
func startFake(t *testing.T, o Options, script func(f *fakeAgent)) (*Client, *fakeAgent, error) {
	t.Helper()
	f := newFakeAgent(t)
	if o.Argv == nil {
		o.Argv = []string{"fake-agent"}
	}
	if o.Cwd == "" {
		o.Cwd = t.TempDir()
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 5 * time.Second
	}
	if o.Log == nil {
		o.Log = testLogger(t)
	}
	c, err := newClient(o)
	if err != nil {
		return nil, f, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		script(f)
	}()
	t.Cleanup(func() {
		f.die(Exit{Code: 0})
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("fake agent script still running")
		}
	})
	c.connect(f.fromR, f.stderrR, f.toAgentW, f)
	c, err = c.start(context.Background())
	return c, f, err
}

// recorder is a Handler that keeps everything, in order.
type recorder struct {
	mu      sync.Mutex
	log     []string
	updates []Update
	perms   []Permission
	settled []Settled
	exit    *Exit
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (r *recorder) note(s string) {
	r.log = append(r.log, s)
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) Update(u Update) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updates = append(r.updates, u)
	r.note("update:" + u.Kind)
}

func (r *recorder) Permission(p Permission) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.perms = append(r.perms, p)
	r.note("permission:" + p.Key)
}

func (r *recorder) PermissionSettled(s Settled) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settled = append(r.settled, s)
	r.note("settled:" + s.Key + ":" + s.Reason)
}

func (r *recorder) Exited(e Exit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exit = &e
	r.note("exited")
}

// wait waits until cond holds (checked under the recorder's lock).
func (r *recorder) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// A guard: the real agents (agents_test.go) ask through a model turn,
	// which a loaded machine slows down.
	deadline := time.After(60 * time.Second)
	for {
		r.mu.Lock()
		ok := cond()
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("timed out waiting for %s; events: %s", what, strings.Join(r.log, " "))
		}
	}
}

func (r *recorder) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

// waitPermission waits for the n-th permission (1-based) and returns it.
func (r *recorder) waitPermission(t *testing.T, n int) Permission {
	t.Helper()
	r.wait(t, fmt.Sprintf("permission #%d", n), func() bool { return len(r.perms) >= n })
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.perms[n-1]
}

var errNoID = errors.New("no id")

// idOf returns a wire message's id as a number.
func idOf(w wire) (int, error) {
	var n int
	if len(w.ID) == 0 {
		return 0, errNoID
	}
	err := json.Unmarshal(w.ID, &n)
	return n, err
}

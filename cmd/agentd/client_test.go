package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/rpc/protocol"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// agentdBinary builds the real agentd once per test run.
func agentdBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentd-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "agentd")
		args := []string{"build", "-o", binPath}
		if raceBuild {
			args = append(args, "-race") // go test -race checks the real binary too
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// stdioClient drives a real `agentd --stdio` over pipes, as an editor does, with
// an independent framing codec (jsonrpc2's VS Code codec).
type stdioClient struct {
	t    testing.TB
	cmd  *exec.Cmd
	conn *jsonrpc2.Conn
	in   io.WriteCloser
	init initResult

	closeOnce sync.Once
	exitCode  int
	// private: this agentd serves only this client (--private), so its
	// sessions end when it exits. homes are the HOMEs it spawned sessions
	// with, which close waits to be free of processes.
	private bool
	homes   []string

	mu     sync.Mutex
	notes  []notification
	notify chan struct{}
}

type notification struct {
	Method string
	Params json.RawMessage
	At     time.Time
}

func startAgentd(t testing.TB, extraArgs ...string) *stdioClient {
	t.Helper()
	return startAgentdLog(t, filepath.Join(t.TempDir(), "agentd.log"), extraArgs...)
}

// startAgentdLog starts agentd, private to this client, logging to logPath.
func startAgentdLog(t testing.TB, logPath string, extraArgs ...string) *stdioClient {
	t.Helper()
	return startClient(t, append([]string{"--stdio", "--private", "--log", logPath}, extraArgs...), nil)
}

// initResult is what a test looks at in initialize's result.
type initResult struct {
	ServerInfo struct{ Version string } `json:"serverInfo"`
	Daemon     struct {
		Pid         int                     `json:"pid"`
		Instance    string                  `json:"instance"`
		Version     string                  `json:"version"`
		Private     bool                    `json:"private"`
		LastUpgrade *protocol.UpgradeRecord `json:"lastUpgrade"`
	} `json:"daemon"`
	Warnings []string `json:"warnings"`
}

// startClient runs agentd with args (and env, when not nil) as an editor
// would, and sends initialize.
func startClient(t testing.TB, args, env []string) *stdioClient {
	t.Helper()
	return startClientIn(t, "", args, env)
}

// startClientIn is startClient with agentd running in dir.
func startClientIn(t testing.TB, dir string, args, env []string) *stdioClient {
	t.Helper()
	return startClientWith(t, agentdBinary(t), dir, args, env)
}

// startClientWith is startClientIn with the agentd binary bin.
func startClientWith(t testing.TB, bin, dir string, args, env []string) *stdioClient {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &stdioClient{t: t, cmd: cmd, in: in, notify: make(chan struct{}, 1), private: slices.Contains(args, "--private")}
	rw := struct {
		io.Reader
		io.WriteCloser
	}{out, in}
	c.conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(rw, jsonrpc2.VSCodeObjectCodec{}), jsonrpc2.HandlerWithError(c.handle), jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	t.Cleanup(func() { c.close() })
	if err := c.call("initialize", map[string]any{"clientInfo": map[string]string{"name": "agentd-test"}}, &c.init); err != nil {
		t.Logf("initialize: %v", err)
	}
	return c
}

func (c *stdioClient) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	if req.Params == nil {
		return nil, nil
	}
	c.mu.Lock()
	c.notes = append(c.notes, notification{Method: req.Method, Params: append(json.RawMessage(nil), *req.Params...), At: time.Now()})
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
	return nil, nil
}

func (c *stdioClient) call(method string, params, result any) error {
	c.t.Helper()
	if p, ok := params.(map[string]any); ok && method == "session/spawn" {
		if env, ok := p["env"].(map[string]*string); ok && env["HOME"] != nil {
			c.mu.Lock()
			c.homes = append(c.homes, *env["HOME"])
			c.mu.Unlock()
		}
	}
	guard := 30 * time.Second
	if method == "session/spawn" {
		// An ACP spawn answers once the agent is up (initialize,
		// session/new): a real agent on a busy machine takes a while.
		guard = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	return c.conn.Call(ctx, method, params, result)
}

func (c *stdioClient) mustCall(method string, params, result any) {
	c.t.Helper()
	if err := c.call(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// stateNote is a session/state notification.
type stateNote struct {
	SessionID   string `json:"sessionId"`
	State       string `json:"state"`
	Previous    string `json:"previous"`
	Outcome     string `json:"outcome"`
	StateSource string `json:"stateSource"`
	Reason      string `json:"reason"`
	Attention   bool   `json:"attention"`
	Message     string `json:"message"`
	Agent       string `json:"agent"`
	Prompt      *struct {
		PromptID string `json:"promptId"`
		Kind     string `json:"kind"`
		Question string `json:"question"`
		Options  []struct {
			ID    string `json:"id"`
			Label string `json:"label"`
		} `json:"options"`
		Subject *struct {
			Kind      string `json:"kind"`
			Text      string `json:"text"`
			Detail    string `json:"detail"`
			Truncated bool   `json:"truncated"`
		} `json:"subject"`
	} `json:"prompt"`
}

// waitState waits for a session/state notification with the given state,
// looking at notifications from index *from on, and advances *from past it.
func (c *stdioClient) waitState(sessionID, state string, from *int, timeout time.Duration) stateNote {
	c.t.Helper()
	return c.waitStates(sessionID, []string{state}, from, timeout)
}

// waitStates waits for the session's next state that is one of states.
func (c *stdioClient) waitStates(sessionID string, states []string, from *int, timeout time.Duration) stateNote {
	c.t.Helper()
	state := strings.Join(states, " or ")
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		notes := c.notes
		c.mu.Unlock()
		for i := *from; i < len(notes); i++ {
			n := notes[i]
			if n.Method != "session/state" {
				continue
			}
			var s stateNote
			_ = json.Unmarshal(n.Params, &s)
			if s.SessionID == sessionID && slices.Contains(states, s.State) {
				*from = i + 1
				return s
			}
		}
		select {
		case <-c.notify:
		case <-deadline:
			c.t.Fatalf("no %q state for %s within %s; states seen: %s\nscreen:\n%s", state, sessionID, timeout, c.states(sessionID), c.screen(sessionID))
		}
	}
}

// waitStateOr waits for the session's next state that is state, or one of
// later: states that come only after it, so that they tell it happened
// (a turn that is blocked or done has worked, though agentd may have seen
// no frame of the work between two looks). It advances *from past state;
// a later state is left for the next wait to find.
func (c *stdioClient) waitStateOr(sessionID, state string, later []string, from *int, timeout time.Duration) stateNote {
	c.t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		notes := c.notes
		c.mu.Unlock()
		for i := *from; i < len(notes); i++ {
			var s stateNote
			if notes[i].Method != "session/state" || json.Unmarshal(notes[i].Params, &s) != nil || s.SessionID != sessionID {
				continue
			}
			switch {
			case s.State == state:
				*from = i + 1
				return s
			case slices.Contains(later, s.State):
				*from = i
				return s
			}
		}
		select {
		case <-c.notify:
		case <-deadline:
			c.t.Fatalf("no %q state (nor a later %s) for %s within %s; states seen: %s\nscreen:\n%s", state, strings.Join(later, " or "), sessionID, timeout, c.states(sessionID), c.screen(sessionID))
		}
	}
}

// awaitNotState waits for a state of the session, notified at from or
// later, other than state, and says whether one came within timeout.
func (c *stdioClient) awaitNotState(sessionID, state string, from int, timeout time.Duration) bool {
	c.t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		notes := c.notes
		c.mu.Unlock()
		for i := from; i < len(notes); i++ {
			var s stateNote
			if notes[i].Method == "session/state" && json.Unmarshal(notes[i].Params, &s) == nil && s.SessionID == sessionID && s.State != state {
				return true
			}
		}
		select {
		case <-c.notify:
		case <-deadline:
			return false
		}
	}
}

// awaitPromptLeft waits for the session's next state that is not blocked
// on promptID, and says whether it came within timeout. It leaves that
// state for the next wait to find.
func (c *stdioClient) awaitPromptLeft(sessionID, promptID string, from *int, timeout time.Duration) bool {
	c.t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		notes := c.notes
		c.mu.Unlock()
		for i := *from; i < len(notes); i++ {
			var s stateNote
			if notes[i].Method != "session/state" || json.Unmarshal(notes[i].Params, &s) != nil || s.SessionID != sessionID {
				continue
			}
			if s.State != "blocked" || s.Prompt == nil || s.Prompt.PromptID != promptID {
				*from = i
				return true
			}
		}
		select {
		case <-c.notify:
		case <-deadline:
			return false
		}
	}
}

// noteRetry records that a test did something again to pass (an answer
// whose keys did not take, sent again as a person clicks again): in the
// test's log, and in the file $AGENTD_RETRY_LOG names, whose lines make
// test lists at its end even when the test passed. Nothing is retried
// blindly: only what agentd says may be done again.
func noteRetry(t testing.TB, what string) {
	t.Helper()
	t.Logf("retry: %s", what)
	path := os.Getenv("AGENTD_RETRY_LOG")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Errorf("retry log: %v", err)
		return
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s: %s\n", t.Name(), what); err != nil {
		t.Errorf("retry log: %v", err)
	}
}

// states lists the states notified for a session, in order.
func (c *stdioClient) states(sessionID string) []string {
	var out []string
	for _, n := range c.stateNotes(sessionID) {
		out = append(out, n.note.State+"("+n.note.Reason+")")
	}
	return out
}

// waitPrompt waits for a blocked state whose prompt has options: agents
// that report blocked (OSC 7501) before drawing the prompt send one without.
func (c *stdioClient) waitPrompt(sessionID string, from *int, timeout time.Duration) stateNote {
	c.t.Helper()
	b := c.waitState(sessionID, "blocked", from, timeout)
	for b.Prompt == nil || len(b.Prompt.Options) == 0 {
		b = c.waitState(sessionID, "blocked", from, 10*time.Second)
	}
	return b
}

// screen is the session's screen now, for failure messages.
func (c *stdioClient) screen(sessionID string) string {
	var r struct{ Rows []string }
	if err := c.call("session/read", map[string]any{"sessionId": sessionID}, &r); err != nil {
		return "(session/read: " + err.Error() + ")"
	}
	return strings.Join(r.Rows, "\n")
}

// close closes agentd's stdin and waits for it to exit; it returns the
// exit code (-1 when killed). A private agentd has then ended its
// sessions: close waits until no process runs with their HOMEs, which the
// test's temporary folder holds (an agent's child can outlive its leader
// for a moment, still writing there).
func (c *stdioClient) close() int {
	c.closeOnce.Do(func() {
		_ = c.in.Close()
		done := make(chan struct{})
		go func() { _ = c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-done
			c.t.Errorf("agentd did not exit within 10s of stdin closing")
		}
		c.exitCode = c.cmd.ProcessState.ExitCode()
		if c.private {
			c.mu.Lock()
			homes := c.homes
			c.mu.Unlock()
			for _, home := range homes {
				awaitNoProcessWithHome(c.t, home, 30*time.Second)
			}
		}
	})
	return c.exitCode
}

// rpcCode returns the JSON-RPC error code of err, or 0.
func rpcCode(err error) int64 {
	if e, ok := err.(*jsonrpc2.Error); ok {
		return e.Code
	}
	return 0
}

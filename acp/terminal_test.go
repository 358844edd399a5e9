package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// terminal/* through ExecTerminals, driven by the fake agent the way
// Claude Code ACP drives it (a shell command line in "command", no args).
func TestTerminals(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if err := os.MkdirAll(filepath.Join(work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	type result struct {
		name string
		w    wire
	}
	results := make(chan result, 32)
	host := &ExecTerminals{}
	c, _, err := startFake(t, Options{Cwd: work, Terminals: host}, func(f *fakeAgent) {
		f.handshake("s1")
		id := 0
		call := func(name, method string, params map[string]any) wire {
			id++
			params["sessionId"] = "s1"
			f.request(id, method, params)
			w := f.recv()
			results <- result{name, w}
			return w
		}
		termID := func(w wire) string {
			var r struct {
				TerminalID string `json:"terminalId"`
			}
			_ = json.Unmarshal(w.Result, &r)
			return r.TerminalID
		}
		// A shell line: runs in the session folder, env added, exit code 3.
		w := call("create", "terminal/create", map[string]any{
			"command": "printf 'hi %s from ' \"$GREETING\"; pwd; touch made-by-terminal; exit 3",
			"env":     []any{map[string]any{"name": "GREETING", "value": "there"}},
		})
		t1 := termID(w)
		call("wait", "terminal/wait_for_exit", map[string]any{"terminalId": t1})
		call("output", "terminal/output", map[string]any{"terminalId": t1})
		call("release", "terminal/release", map[string]any{"terminalId": t1})
		call("output after release", "terminal/output", map[string]any{"terminalId": t1})
		// Command with args, cwd inside, output limit keeps the tail.
		w = call("create args", "terminal/create", map[string]any{
			"command": "/bin/sh", "args": []any{"-c", "printf 0123456789abcdef"}, "cwd": filepath.Join(work, "sub"), "outputByteLimit": 6,
		})
		t2 := termID(w)
		call("wait 2", "terminal/wait_for_exit", map[string]any{"terminalId": t2})
		call("output 2", "terminal/output", map[string]any{"terminalId": t2})
		// A long command killed, then left for the client to release at exit.
		w = call("create sleep", "terminal/create", map[string]any{"command": "sleep 30"})
		t3 := termID(w)
		call("output running", "terminal/output", map[string]any{"terminalId": t3})
		call("kill", "terminal/kill", map[string]any{"terminalId": t3})
		call("wait killed", "terminal/wait_for_exit", map[string]any{"terminalId": t3})
		// Refused: a cwd outside, an id never created.
		call("cwd outside", "terminal/create", map[string]any{"command": "true", "cwd": root})
		call("unknown id", "terminal/output", map[string]any{"terminalId": "term-99"})
		close(results)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := map[string]wire{}
	timeout := time.After(20 * time.Second)
	for done := false; !done; {
		select {
		case r, ok := <-results:
			if !ok {
				done = true
				break
			}
			got[r.name] = r.w
		case <-timeout:
			t.Fatal("terminal calls did not finish")
		}
	}
	ok := func(name string) json.RawMessage {
		t.Helper()
		w := got[name]
		if w.Error != nil || w.Result == nil {
			t.Errorf("%s: %s", name, w.Line)
		}
		return w.Result
	}
	failed := func(name, want string) {
		t.Helper()
		w := got[name]
		if w.Error == nil || !strings.Contains(w.Error.Message, want) {
			t.Errorf("%s: %s, want an error containing %q", name, w.Line, want)
		}
	}
	ok("create")
	if r := string(ok("wait")); r != `{"exitCode":3}` {
		t.Errorf("wait: %s", r)
	}
	var out struct {
		Output     string `json:"output"`
		Truncated  bool   `json:"truncated"`
		ExitStatus *struct {
			ExitCode *int    `json:"exitCode"`
			Signal   *string `json:"signal"`
		} `json:"exitStatus"`
	}
	_ = json.Unmarshal(ok("output"), &out)
	if out.Output != "hi there from "+work+"\n" || out.Truncated || out.ExitStatus == nil || *out.ExitStatus.ExitCode != 3 {
		t.Errorf("output: %s", got["output"].Line)
	}
	if _, err := os.Stat(filepath.Join(work, "made-by-terminal")); err != nil {
		t.Error(err)
	}
	ok("release")
	failed("output after release", "no such terminal")
	out.ExitStatus = nil
	_ = json.Unmarshal(ok("output 2"), &out)
	if out.Output != "abcdef" || !out.Truncated {
		t.Errorf("output 2: %s", got["output 2"].Line)
	}
	out.ExitStatus = nil
	_ = json.Unmarshal(ok("output running"), &out)
	if out.ExitStatus != nil {
		t.Errorf("running: %s", got["output running"].Line)
	}
	ok("kill")
	if r := string(ok("wait killed")); r != `{"signal":"SIGKILL"}` {
		t.Errorf("wait killed: %s", r)
	}
	failed("cwd outside", "outside the session folder")
	failed("unknown id", "no such terminal")

	// Terminals the agent did not release are released when it exits.
	_ = c.Close()
	host.mu.Lock()
	left := len(host.terms)
	host.mu.Unlock()
	if left != 0 {
		t.Errorf("%d terminals left after the agent exited", left)
	}
}

func TestExecTerminalsWaitHonoursContext(t *testing.T) {
	h := &ExecTerminals{}
	id, err := h.Create(context.Background(), TerminalRequest{Command: "sleep 30", Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(id)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := h.WaitForExit(ctx, id); err != context.DeadlineExceeded {
		t.Errorf("WaitForExit = %v", err)
	}
}

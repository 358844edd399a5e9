package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a tiny ACP agent process (a fake too, but a
// real process), so spawning, stderr, exit status and the process group
// are tested on the real path.
func TestMain(m *testing.M) {
	if os.Getenv("ACP_TEST_AGENT") == "1" {
		os.Exit(processAgent())
	}
	os.Exit(m.Run())
}

func processAgent() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	send := func(v any) {
		b, _ := json.Marshal(v)
		os.Stdout.Write(append(b, '\n'))
	}
	fmt.Fprintln(os.Stderr, "process agent starting")
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Prompt []struct{ Text string } `json:"prompt"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"protocolVersion": 1, "agentInfo": map[string]any{"name": "process-agent", "version": "1"}}})
		case "session/new":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"sessionId": "proc-1"}})
		case "session/prompt":
			text := ""
			if len(m.Params.Prompt) > 0 {
				text = m.Params.Prompt[0].Text
			}
			switch text {
			case "spawn a child":
				// A grandchild in the agent's process group: Close must end it.
				cmd := exec.Command("sleep", "60")
				if err := cmd.Start(); err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 1
				}
				send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "proc-1", "update": map[string]any{
					"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": strconv.Itoa(cmd.Process.Pid)}}}})
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"stopReason": "end_turn"}})
			case "crash":
				fmt.Fprintln(os.Stderr, "fatal: the process agent crashed on purpose")
				return 7
			default:
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"stopReason": "end_turn"}})
			}
		}
	}
	return 0
}

func processOptions(t *testing.T, h Handler) Options {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		Argv:         []string{exe, "-test.run=^$"},
		Env:          append(os.Environ(), "ACP_TEST_AGENT=1"),
		Cwd:          t.TempDir(),
		Handler:      h,
		Log:          testLogger(t),
		StartTimeout: 20 * time.Second,
	}
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	// A zombie still answers kill 0; ps says Z (procps and BSD ps alike).
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return true
	}
	return !strings.HasPrefix(strings.TrimSpace(string(out)), "Z")
}

func TestRealProcessCloseEndsItsGroup(t *testing.T) {
	rec := newRecorder()
	o := processOptions(t, rec)
	c, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if c.Pid() <= 0 || c.Info().Name != "process-agent" || c.SessionID() != "proc-1" {
		t.Errorf("pid %d info %+v session %q", c.Pid(), c.Info(), c.SessionID())
	}
	if r, err := c.Prompt(context.Background(), "spawn a child"); err != nil || r != "end_turn" {
		t.Fatalf("Prompt = %q, %v", r, err)
	}
	rec.mu.Lock()
	child, _ := strconv.Atoi(rec.updates[0].Text)
	rec.mu.Unlock()
	if child <= 0 || !alive(child) {
		t.Fatalf("child %d not running", child)
	}
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
	for i := 0; alive(child) && i < 100; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(child) {
		t.Errorf("the agent's child %d outlived Close", child)
		_ = syscall.Kill(child, syscall.SIGKILL)
	}
	// Close closes the agent's stdin and sends SIGHUP: this agent may end
	// either way.
	if e := c.Exit(); e.Signal != "SIGHUP" && e.Code != 0 {
		t.Errorf("exit %+v", e)
	}
	if l := logged(o.Log); !strings.Contains(l, "process agent starting") || !strings.Contains(l, "stream=stderr") {
		t.Errorf("stderr not logged:\n%s", l)
	}
}

// The agent exiting mid-turn ends the client: Prompt fails with the exit
// status and the agent's last stderr line; Exited reports the code.
func TestRealProcessExitMidTurn(t *testing.T) {
	rec := newRecorder()
	c, err := Start(context.Background(), processOptions(t, rec))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Prompt(context.Background(), "crash")
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "exit status 7") || !strings.Contains(err.Error(), "crashed on purpose") {
		t.Errorf("Prompt = %v", err)
	}
	rec.wait(t, "exited", func() bool { return rec.exit != nil })
	if rec.exit.Code != 7 {
		t.Errorf("exit %+v", rec.exit)
	}
}

func TestStartFailures(t *testing.T) {
	dir := t.TempDir()
	base := func(argv ...string) Options {
		return Options{Argv: argv, Cwd: dir, Log: testLogger(t), StartTimeout: 300 * time.Millisecond}
	}
	t.Run("not found", func(t *testing.T) {
		_, err := Start(context.Background(), base("no-such-agent-xyz"))
		if err == nil || !strings.Contains(err.Error(), `program "no-such-agent-xyz" not found on PATH`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("exits at once", func(t *testing.T) {
		_, err := Start(context.Background(), base("/bin/sh", "-c", "echo 'Error: set an API key' >&2; exit 2"))
		if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "exited during initialize: exit status 2; stderr: Error: set an API key") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("never answers", func(t *testing.T) {
		start := time.Now()
		_, err := Start(context.Background(), base("/bin/sh", "-c", "echo not an agent; exec sleep 30"))
		if err == nil || !strings.Contains(err.Error(), "did not answer initialize within the start timeout") {
			t.Errorf("err = %v", err)
		}
		if d := time.Since(start); d > 4*time.Second {
			t.Errorf("Start took %v", d)
		}
	})
	t.Run("bad cwd", func(t *testing.T) {
		o := base("/bin/true")
		o.Cwd = "relative/dir"
		if _, err := Start(context.Background(), o); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
			t.Errorf("err = %v", err)
		}
	})
}

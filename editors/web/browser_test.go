package web

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/fixtures/fakemodel"
	"github.com/agentd/agentd/fixtures/lab"
	"github.com/agentd/agentd/rpc/protocol"
)

// TestBrowserEndToEnd is the page in a real Chromium against the real
// daemon and the real `agentd web`: the demo agent and the real Claude
// Code (offline, on the fake model server) block on their permission
// prompts; e2e/browser.mjs taps Yes on each, then taps a stale prompt
// again from a tab that missed the update. editors/web/ci.sh runs it
// (AGENTD_WEB_BROWSER=1, with playwright-core installed by npm ci).
func TestBrowserEndToEnd(t *testing.T) {
	if os.Getenv("AGENTD_WEB_BROWSER") == "" {
		t.Skip("the browser test runs with AGENTD_WEB_BROWSER=1 (make web, editors/web/ci.sh): it needs Chromium and npm ci in editors/web")
	}
	claudeBin := lab.Require(t, "claude")
	d, demo := startDaemon(t)

	// Claude Code, offline: the fake model asks to run a command that makes a file.
	ld, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	made := filepath.Join(ld.Work, "from-the-phone.txt")
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{
		Prompt:    "make a file",
		Reply:     fakemodel.Reply{Text: "I'll create it.", Tool: lab.ClaudeBash("touch from-the-phone.txt", "Create from-the-phone.txt")},
		AfterTool: fakemodel.Reply{Text: "Created from-the-phone.txt."},
	}}}
	l, srv, err := lab.Claude(claudeBin, ld, script, lab.ClaudeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	env := map[string]*string{}
	for _, kv := range l.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = &v
	}
	for _, k := range lab.ClaudeUnset {
		env[k] = nil
	}
	// CI=true (which .ci/run has) makes Claude Code draw without colour,
	// and the colour of its screen on the page is part of what is checked.
	env["CI"] = nil
	var claude protocol.Session
	if err := d.c.Call(context.Background(), "session/spawn", map[string]any{"argv": l.Argv, "cwd": ld.Work, "env": env,
		"cols": 100, "rows": 30, "name": "Claude Code"}, &claude); err != nil {
		t.Fatal(err)
	}
	d.blockDemo(demo)
	d.waitState(claude.SessionID, "idle")
	if err := d.c.Call(context.Background(), "runtime_send", protocol.SendParams{SessionID: claude.SessionID, Text: "please make a file", Submit: true}, nil); err != nil {
		t.Fatal(err)
	}
	d.waitState(claude.SessionID, "blocked")

	link, tokenFile := startWebCommand(t, d)
	artifacts := os.Getenv("ARTIFACTS")
	if artifacts == "" {
		artifacts = filepath.Join("artifacts")
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "e2e/browser.mjs")
	cmd.Env = append(os.Environ(), "LINK="+link, "ARTIFACTS="+artifacts, "DEMO="+demo, "CLAUDE="+claude.SessionID, "CLAUDE_FILE="+made,
		"AGENTD="+agentdBinary(t), "TOKEN_FILE="+tokenFile, "AGENTD_SOCKET="+d.socket)
	out, err := cmd.CombinedOutput()
	t.Logf("e2e/browser.mjs:\n%s", out)
	if err != nil {
		for i, r := range srv.Requests() {
			t.Logf("model request %d: %s last=%q toolResult=%v", i, r.Path, r.LastUser, r.ToolResult)
		}
		t.Fatalf("e2e/browser.mjs: %v", err)
	}
	if !strings.Contains(string(out), "# fail 0") {
		t.Fatal("e2e/browser.mjs printed no clean summary")
	}
	// What the page did, seen from the daemon: Claude ran the approved
	// command once and finished its turn.
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("the approved command's file: %v", err)
	}
	if toolResults := countToolResults(srv.Requests()); toolResults != 1 {
		t.Errorf("the model got %d tool results, want 1 (one answer typed)", toolResults)
	}
}

func countToolResults(reqs []fakemodel.Request) int {
	n := 0
	for _, r := range reqs {
		if r.ToolResult {
			n++
		}
	}
	return n
}

// startWebCommand runs the real `agentd web` against the test's daemon
// and returns the link it prints and its token file.
func startWebCommand(t *testing.T, d *daemon) (link, tokenFile string) {
	t.Helper()
	return startWebWith(t, d.env, "--listen", "127.0.0.1:0")
}

// startWebWith runs the real `agentd web args…` in env.
func startWebWith(t *testing.T, env []string, args ...string) (link, tokenFile string) {
	t.Helper()
	tokenFile = filepath.Join(t.TempDir(), "web-token")
	cmd := exec.Command(agentdBinary(t), append([]string{"web"}, args...)...)
	cmd.Env = append(append([]string(nil), env...), "AGENTD_WEB_TOKEN_FILE="+tokenFile)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(t.TempDir(), "web.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		b, _ := os.ReadFile(logFile.Name())
		t.Logf("agentd web's log:\n%s", b)
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("agentd web ended before printing its link")
			}
			if strings.HasPrefix(l, "http") && strings.Contains(l, "/login?code=") {
				go func() {
					for range lines {
					}
				}()
				return l, tokenFile
			}
		case <-timeout:
			t.Fatal("waited 60 s for agentd web's link")
		}
	}
}

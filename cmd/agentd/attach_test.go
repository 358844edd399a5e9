package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmux runs a private tmux server for one test.
type tmux struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T) *tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("AGENTD_REQUIRE_AGENTS") != "" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	x := &tmux{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", x.socket, "kill-server").Run() })
	return x
}

func (x *tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", x.socket}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// waitFor polls the pane until it shows want (tmux tells nobody when a
// pane changes); the guard's message shows what the pane held.
func (x *tmux) waitFor(want string, timeout time.Duration) string {
	x.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		screen := x.run("capture-pane", "-p", "-t", "t")
		if strings.Contains(screen, want) {
			return screen
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("the tmux pane did not show %q within %s; it shows:\n%s", want, timeout, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// agentd attach in a real terminal (tmux): the pane shows the agent's
// screen, keys typed there reach the agent, a resize of the pane resizes
// the session, and the detach key leaves the agent running, as the other
// clients see.
func TestAttachInTmux(t *testing.T) {
	x := newTmux(t)
	d := newDaemonEnv(t)
	c := d.forwarder()
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{agentdBinary(t), "demo-agent"}, "cwd": t.TempDir(), "name": "demo", "cols": 80, "rows": 24}, &s)
	from := 0
	c.waitState(s.SessionID, "idle", &from, 20*time.Second)

	x.attach(d, "demo")

	x.waitFor("Welcome to the agentd demo agent", 20*time.Second)
	// The session took the pane's size.
	if sz := sizeOf(t, c, s.SessionID); sz != "100x30" {
		t.Errorf("the attached session is %s, want the pane's 100x30", sz)
	}
	x.run("send-keys", "-t", "t", "-l", "Add a NOTES.md file")
	x.run("send-keys", "-t", "t", "Enter")
	b := c.waitPrompt(s.SessionID, &from, 20*time.Second)
	screen := x.waitFor("Do you want to proceed?", 20*time.Second)
	t.Logf("the attached pane:\n%s", screen)

	x.run("resize-window", "-t", "t", "-x", "90", "-y", "28")
	deadline := time.Now().Add(10 * time.Second)
	for sizeOf(t, c, s.SessionID) != "90x28" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if sz := sizeOf(t, c, s.SessionID); sz != "90x28" {
		t.Errorf("after the pane's resize the session is %s, want 90x28", sz)
	}

	x.run("send-keys", "-t", "t", `C-\`)
	after := x.waitFor("attach exited 0", 10*time.Second)
	if !strings.Contains(after, "[agentd: detached from s1 (demo); it runs on: agentd attach s1]") {
		t.Errorf("the pane after detaching:\n%s", after)
	}
	if !alive(s.Pid) {
		t.Fatalf("the agent ended when its terminal view detached")
	}
	for _, ls := range c.list().Sessions {
		if ls.SessionID == s.SessionID && (ls.State != "blocked" || ls.Prompt == nil || ls.Prompt.PromptID != b.Prompt.PromptID) {
			t.Errorf("after detaching the session is %s (prompt %+v), want still blocked on %s", ls.State, ls.Prompt, b.Prompt.PromptID)
		}
	}
}

// Attaching is looking: a session whose turn ended (done) reads idle once
// agentd attach shows it, for every client (ls before showed done).
func TestAttachMarksADoneSessionSeen(t *testing.T) {
	x := newTmux(t)
	d := newDaemonEnv(t)
	c := d.forwarder()
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{agentdBinary(t), "demo-agent"}, "cwd": t.TempDir(), "name": "demo", "cols": 80, "rows": 24}, &s)
	from := 0
	c.waitState(s.SessionID, "idle", &from, 20*time.Second)
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "Add a NOTES.md file", "submit": true}, nil)
	b := c.waitPrompt(s.SessionID, &from, 20*time.Second)
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": "1"}, nil)
	c.waitState(s.SessionID, "done", &from, 30*time.Second)

	x.attach(d, "demo")
	x.waitFor("Worked for", 20*time.Second)
	idle := c.waitState(s.SessionID, "idle", &from, 20*time.Second)
	if idle.Previous != "done" {
		t.Errorf("after attaching: %s from %s, want idle from done", idle.State, idle.Previous)
	}
	// While attached, agentd attach is a focused client.
	waitLogLine(t, d.log, `msg="client focus"`, 10*time.Second)
	if l := logLines(d.log, `msg="client focus"`, "focused=true"); len(l) != 1 {
		t.Errorf("agentd attach's focus: %q, want one focused=true", logLines(d.log, `msg="client focus"`))
	}
	x.run("send-keys", "-t", "t", `C-\`)
	x.waitFor("attach exited 0", 10*time.Second)
	for _, ls := range c.list().Sessions {
		if ls.SessionID == s.SessionID && ls.State != "idle" {
			t.Errorf("after attaching and detaching, ls says %s, want idle", ls.State)
		}
	}
	// agentd ls, the person's own view, says so too (it used to read
	// "done (completed)").
	out, errOut, code := d.cli("ls")
	row := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, s.SessionID+" ") {
			row = line
		}
	}
	if code != 0 || !strings.Contains(row, " idle ") || strings.Contains(row, "done") {
		t.Errorf("agentd ls after attach (exit %d): row %q, want idle\n%s%s", code, row, out, errOut)
	}
}

// attach runs `agentd attach name` against d in a 100x30 tmux session
// "t"; when it ends, the pane says "attach exited N" and stays.
func (x *tmux) attach(d *daemonEnv, name string) {
	script := filepath.Join(x.t.TempDir(), "attach.sh")
	body := d.exports() + fmt.Sprintf("%q attach %s\necho \"attach exited $?\"\nexec sleep 600\n", agentdBinary(x.t), name)
	must(x.t, os.WriteFile(script, []byte(body), 0o755))
	x.run("new-session", "-d", "-s", "t", "-x", "100", "-y", "30", "bash "+script)
}

// exports are the shell lines that give a tmux pane this daemon's
// environment (tmux starts panes with its own).
func (d *daemonEnv) exports() string {
	var b strings.Builder
	for _, kv := range d.env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AGENTD_") || strings.HasPrefix(k, "XDG_") || k == "PATH" || k == "HOME" {
			fmt.Fprintf(&b, "export %s=%q\n", k, v)
		}
	}
	return b.String()
}

// sizeOf is a session's size as session/list tells it, "COLSxROWS".
func sizeOf(t *testing.T, c *stdioClient, id string) string {
	t.Helper()
	var l struct {
		Sessions []struct {
			SessionID  string `json:"sessionId"`
			Cols, Rows int
		} `json:"sessions"`
	}
	c.mustCall("session/list", nil, &l)
	for _, s := range l.Sessions {
		if s.SessionID == id {
			return fmt.Sprintf("%dx%d", s.Cols, s.Rows)
		}
	}
	return "none"
}

// agentd run in a real terminal: the program starts in the daemon, in the
// caller's folder and environment, attached; the detach key leaves it
// running; agentd attach takes it up again.
func TestRunInTmux(t *testing.T) {
	x := newTmux(t)
	d := newDaemonEnv(t)
	work := t.TempDir()
	script := filepath.Join(t.TempDir(), "run.sh")
	// After run detaches, the script waits for an Enter before it attaches
	// again, so the pane can be read in between.
	body := d.exports() + fmt.Sprintf("cd %q\nexport RUN_MARK=from-the-caller\n%q run --name shell -- bash --norc\necho \"run exited $?\"\nread -r _\n%q attach shell\necho \"attach exited $?\"\nexec sleep 600\n", work, agentdBinary(t), agentdBinary(t))
	must(t, os.WriteFile(script, []byte(body), 0o755))
	x.run("new-session", "-d", "-s", "t", "-x", "100", "-y", "30", "bash "+script)
	x.waitFor("bash-", 20*time.Second) // bash --norc's prompt
	x.run("send-keys", "-t", "t", "-l", `echo "mark=$RUN_MARK pwd=$PWD"`)
	x.run("send-keys", "-t", "t", "Enter")
	x.waitFor("mark=from-the-caller pwd="+work, 10*time.Second)
	x.run("send-keys", "-t", "t", `C-\`)
	x.waitFor("run exited 0", 10*time.Second)
	out, _, code := d.cli("ls")
	if code != 0 || !strings.Contains(out, "shell") || strings.Contains(out, "exited") {
		t.Fatalf("after detaching, agentd ls (exit %d):\n%s", code, out)
	}
	// attach takes it up again, on its current screen.
	x.run("send-keys", "-t", "t", "Enter")
	screen := x.waitFor("mark=from-the-caller", 10*time.Second)
	x.run("send-keys", "-t", "t", "-l", "exit")
	x.run("send-keys", "-t", "t", "Enter")
	after := x.waitFor("attach exited 0", 10*time.Second)
	if !strings.Contains(after, "[agentd: s1 (shell) ended: exit code 0]") {
		t.Errorf("the pane after the session ended:\n%s", after)
	}
	t.Logf("attached again:\n%s", screen)
}

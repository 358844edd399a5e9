package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/fixtures/fakemodel"
	"github.com/agentd/agentd/fixtures/lab"
)

// versioned builds of agentd, one per version, for the handover tests: two
// builds that differ the way two releases do (make build VERSION=x).
var versioned sync.Map // version → func() (string, error)

func versionedBinary(t testing.TB, v string) string {
	t.Helper()
	build, _ := versioned.LoadOrStore(v, sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "agentd-"+v+"-")
		if err != nil {
			return "", err
		}
		bin := filepath.Join(dir, "agentd")
		out, err := exec.Command("go", "build", "-ldflags", "-X main.version="+v, "-o", bin, ".").CombinedOutput()
		if err != nil {
			return "", &buildError{v, err, out}
		}
		return bin, nil
	}))
	bin, err := build.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

type buildError struct {
	version string
	err     error
	out     []byte
}

func (e *buildError) Error() string {
	return "go build " + e.version + ": " + e.err.Error() + "\n" + string(e.out)
}

// An upgrade, as a person meets it: a daemon of build A runs the real
// Claude Code blocked on a permission prompt and the demo agent mid-turn,
// with agentd attach open in tmux on the demo. `agentd ls` of the newer
// build B finds the daemon older and has it hand over. Then the daemon is
// B, in the same process; both agents have their pids; the prompt is
// listed with the same promptId and answering it runs the command; the
// demo's turn goes on to its end; the attached terminal is drawn again
// and types into the agent.
func TestUpgradeHandsOverTheSessions(t *testing.T) {
	claudeBin := requireAgent(t, "claude")
	binA, binB := versionedBinary(t, "0.3.0"), versionedBinary(t, "0.4.0")
	x := newTmux(t)
	ld, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{
		Prompt:    "make a file",
		Reply:     fakemodel.Reply{Text: "I'll create it.", Tool: lab.ClaudeBash("touch upgraded.txt", "Create upgraded.txt")},
		AfterTool: fakemodel.Reply{Text: "Created upgraded.txt."},
	}}}
	l, _, err := lab.Claude(claudeBin, ld, script, lab.ClaudeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	d := newDaemonEnv(t)
	a := startClientWith(t, binA, "", []string{"--stdio", "--log", d.log}, d.env)
	if a.init.Daemon.Version != "0.3.0" {
		t.Fatalf("the daemon is %q, want build A's 0.3.0", a.init.Daemon.Version)
	}
	daemon := a.init.Daemon.Pid

	var claude, demo spawned
	a.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": ld.Work, "env": envMap(l.Env, lab.ClaudeUnset...), "cols": 120, "rows": 40}, &claude)
	a.mustCall("session/spawn", map[string]any{"argv": []string{binA, "demo-agent"}, "cwd": t.TempDir(), "name": "demo", "cols": 80, "rows": 24}, &demo)
	cfrom, dfrom := 0, 0
	a.waitState(claude.SessionID, "idle", &cfrom, 60*time.Second)
	a.mustCall("runtime_send", map[string]any{"sessionId": claude.SessionID, "text": "please make a file", "submit": true}, nil)
	blocked := a.waitPrompt(claude.SessionID, &cfrom, 60*time.Second)

	a.waitState(demo.SessionID, "idle", &dfrom, 20*time.Second)
	x.attach(d, "demo")
	x.waitFor("Welcome to the agentd demo agent", 20*time.Second)
	a.mustCall("runtime_send", map[string]any{"sessionId": demo.SessionID, "text": "Add a NOTES.md file", "submit": true}, nil)
	a.waitState(demo.SessionID, "working", &dfrom, 20*time.Second)

	// Build B's ls finds the daemon older, and it hands over.
	cmd := exec.Command(binB, "ls")
	cmd.Env = d.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agentd ls of build B: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "upgraded from 0.3.0 to 0.4.0") {
		t.Errorf("agentd ls of build B does not say it upgraded the daemon:\n%s", out)
	}
	t.Logf("agentd ls of build B:\n%s", out)

	b := startClientWith(t, binB, "", []string{"--stdio", "--log", d.log}, d.env)
	if got := b.init.Daemon; got.Version != "0.4.0" || got.Pid != daemon || got.Instance != a.init.Daemon.Instance {
		t.Fatalf("after the upgrade the daemon is %s pid %d instance %s; want 0.4.0, pid %d, instance %s", got.Version, got.Pid, got.Instance, daemon, a.init.Daemon.Instance)
	}
	for _, ls := range b.list().Sessions {
		switch ls.SessionID {
		case claude.SessionID:
			if ls.Pid != claude.Pid || !alive(claude.Pid) {
				t.Errorf("Claude's pid is %d (alive %v), was %d", ls.Pid, alive(claude.Pid), claude.Pid)
			}
			if ls.State != "blocked" || ls.Prompt == nil || ls.Prompt.PromptID != blocked.Prompt.PromptID {
				t.Fatalf("after the upgrade Claude is %s with prompt %+v; want blocked on %s", ls.State, ls.Prompt, blocked.Prompt.PromptID)
			}
		case demo.SessionID:
			if ls.Pid != demo.Pid || !alive(demo.Pid) {
				t.Errorf("the demo's pid is %d (alive %v), was %d", ls.Pid, alive(demo.Pid), demo.Pid)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(ld.Work, "upgraded.txt")); err == nil {
		t.Fatal("upgraded.txt exists before the answer")
	}
	bc, bd := 0, 0
	b.mustCall("runtime_answer", map[string]any{"sessionId": claude.SessionID, "promptId": blocked.Prompt.PromptID, "optionId": "1"}, nil)
	if done := b.waitState(claude.SessionID, "done", &bc, 60*time.Second); done.Outcome != "completed" {
		t.Errorf("Claude's turn ended %q (%s)", done.Outcome, done.Reason)
	}
	if _, err := os.Stat(filepath.Join(ld.Work, "upgraded.txt")); err != nil {
		t.Errorf("the command approved after the upgrade did not run: %v", err)
	}

	// The demo's turn, begun under A, reaches its prompt and its end under B.
	p := b.waitPrompt(demo.SessionID, &bd, 30*time.Second)
	b.mustCall("runtime_answer", map[string]any{"sessionId": demo.SessionID, "promptId": p.Prompt.PromptID, "optionId": "1"}, nil)
	if done := b.waitState(demo.SessionID, "done", &bd, 30*time.Second); done.Outcome != "completed" {
		t.Errorf("the demo's turn ended %q (%s)", done.Outcome, done.Reason)
	}
	// The attached terminal shows output that came after the handover, and
	// what is typed in it reaches the agent.
	x.waitFor("Added NOTES.md", 20*time.Second)
	x.run("send-keys", "-t", "t", "-l", "one more")
	x.run("send-keys", "-t", "t", "Enter")
	b.waitState(demo.SessionID, "working", &bd, 20*time.Second)
	screen := x.waitFor("> one more", 20*time.Second)
	t.Logf("the attached pane after the upgrade:\n%s", screen)
	if strings.Contains(screen, "attach exited") {
		t.Errorf("agentd attach ended across the upgrade:\n%s", screen)
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/cmd/agentd/internal/upgrade/handover"
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
	ld := labDirs(t)
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
	// agentd ls said so once the watch after the handover was over: the
	// watchdog is gone.
	if last := b.init.Daemon.LastUpgrade; last == nil || last.Settling || last.Error != "" {
		t.Errorf("lastUpgrade %+v, want a settled upgrade without an error", last)
	}
	if w := watchdogs(daemon); len(w) > 0 {
		t.Errorf("handover watchdogs %v still run after the upgrade", w)
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

	// The demo's turn, begun under A, reaches its prompt (perhaps while
	// agentd upgrade waited out the watch after the handover) and its end
	// under B.
	var demoPrompt string
	for _, ls := range b.list().Sessions {
		if ls.SessionID == demo.SessionID && ls.State == "blocked" && ls.Prompt != nil {
			demoPrompt = ls.Prompt.PromptID
		}
	}
	if demoPrompt == "" {
		demoPrompt = b.waitPrompt(demo.SessionID, &bd, 30*time.Second).Prompt.PromptID
	}
	b.mustCall("runtime_answer", map[string]any{"sessionId": demo.SessionID, "promptId": demoPrompt, "optionId": "1"}, nil)
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

// upgradeDaemon runs `bin upgrade [--binary target]` against d's daemon.
func upgradeDaemon(t *testing.T, d *daemonEnv, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"upgrade"}, args...)...)
	cmd.Env = d.env
	out, _ := cmd.CombinedOutput()
	return string(out), cmd.ProcessState.ExitCode()
}

// A handover that cannot happen changes nothing: a new binary that exits
// as it starts, an older binary, one others may write to, and a daemon
// running an ACP agent are each refused with the reason, and the same
// daemon serves on: the requesting client's own connection stays open,
// the prompt keeps its promptId, and answering it still works.
func TestUpgradeRefusedLeavesTheDaemonServing(t *testing.T) {
	geminiBin := requireAgent(t, "gemini")
	binA, binB, binOld := versionedBinary(t, "0.3.0"), versionedBinary(t, "0.4.0"), versionedBinary(t, "0.2.0")
	d := newDaemonEnv(t)
	a := startClientWith(t, binA, "", []string{"--stdio", "--log", d.log}, d.env)
	daemon := a.init.Daemon.Pid
	demo, blocked, from := blockedDemo(t, a, binA)

	dir := t.TempDir()
	broken := filepath.Join(dir, "agentd-broken")
	must(t, os.WriteFile(broken, []byte("#!/bin/sh\necho 'this build is broken' >&2\nexit 3\n"), 0o755))
	writable := filepath.Join(dir, "agentd-writable")
	b, err := os.ReadFile(binB)
	must(t, err)
	must(t, os.WriteFile(writable, b, 0o755))
	must(t, os.Chmod(writable, 0o777))

	lg := labDirs(t)
	gl, _, err := lab.Gemini(geminiBin, lg, acpScript(func(f string) *fakemodel.ToolCall { return lab.GeminiShell("touch "+f, "Create "+f) }), lab.GeminiOptions{Args: []string{"--acp"}})
	must(t, err)
	defer gl.Cleanup()
	var acpSession spawned
	a.mustCall("session/spawn", map[string]any{"argv": gl.Argv, "cwd": lg.Work, "env": envMap(gl.Env), "protocol": "acp"}, &acpSession)
	afrom := 0
	a.waitState(acpSession.SessionID, "idle", &afrom, 60*time.Second)

	for _, c := range []struct {
		name, bin string
		args      []string
		want      []string
	}{
		{"an ACP session runs", binB, nil, []string{"ACP sessions cannot move", acpSession.SessionID}},
		{"a binary that exits as it starts", binA, []string{"--binary", broken}, []string{"did not start", "exit status 3", "this build is broken"}},
		{"an older binary", binA, []string{"--binary", binOld}, []string{"0.2.0", "older than this daemon's 0.3.0", "never hands over to an older binary"}},
		{"a binary others may write", binA, []string{"--binary", writable}, []string{"writable by others"}},
	} {
		out, code := upgradeDaemon(t, d, c.bin, c.args...)
		if code == 0 {
			t.Errorf("%s: agentd upgrade exited 0:\n%s", c.name, out)
		}
		for _, w := range append(c.want, "every session runs on under this daemon (version 0.3.0)") {
			if !strings.Contains(out, w) {
				t.Errorf("%s: agentd upgrade says %q, which lacks %q", c.name, strings.TrimSpace(out), w)
			}
		}
		if c.name == "an ACP session runs" {
			a.mustCall("session/kill", map[string]any{"sessionId": acpSession.SessionID}, nil)
			a.waitState(acpSession.SessionID, "exited", &afrom, 30*time.Second)
		}
		// The same daemon, on the same connection, with the same prompt.
		var listed bool
		for _, ls := range a.list().Sessions {
			if ls.SessionID == demo.SessionID {
				listed = ls.State == "blocked" && ls.Prompt != nil && ls.Prompt.PromptID == blocked.Prompt.PromptID && ls.Pid == demo.Pid
			}
		}
		if !listed {
			t.Fatalf("%s: after the refusal the demo is not listed blocked on %s with pid %d", c.name, blocked.Prompt.PromptID, demo.Pid)
		}
	}
	c := startClientWith(t, binA, "", []string{"--stdio", "--log", d.log}, d.env)
	if got := c.init.Daemon; got.Pid != daemon || got.Version != "0.3.0" {
		t.Errorf("after the refusals the daemon is pid %d version %s, want %d 0.3.0", got.Pid, got.Version, daemon)
	}
	a.mustCall("runtime_answer", map[string]any{"sessionId": demo.SessionID, "promptId": blocked.Prompt.PromptID, "optionId": "1"}, nil)
	a.waitState(demo.SessionID, "done", &from, 30*time.Second)
}

// New code that cannot take over after the exec hands the sessions back:
// the daemon executes the binary it came from with the same handover, the
// sessions are served as before by the same process, and the person who
// asked is told why.
//
// As a person installs: 0.4.0 is moved over the path 0.3.0 runs from, so
// the hand-back must run the old image, not the file at the old path.
func TestUpgradeHandsBackWhenTheNewCodeFails(t *testing.T) {
	binA := filepath.Join(t.TempDir(), "agentd")
	copyFile(t, versionedBinary(t, "0.3.0"), binA, 0o755)
	d := newDaemonEnv(t)
	d.env = append(d.env, handover.EnvFault+"=1") // the daemon's, so the new code's, environment
	a := startClientWith(t, binA, "", []string{"--stdio", "--log", d.log}, d.env)
	daemon := a.init.Daemon.Pid
	demo, blocked, _ := blockedDemo(t, a, binA)

	binB := binA + ".new"
	copyFile(t, versionedBinary(t, "0.4.0"), binB, 0o755)
	if err := os.Rename(binB, binA); err != nil {
		t.Fatal(err)
	}
	binB = binA
	out, code := upgradeDaemon(t, d, binB)
	if code == 0 || !strings.Contains(out, "could not take over, and handed the sessions back to 0.3.0") || !strings.Contains(out, handover.EnvFault) {
		t.Errorf("agentd upgrade exited %d saying:\n%s", code, out)
	}
	c := startClientWith(t, versionedBinary(t, "0.3.0"), "", []string{"--stdio", "--log", d.log}, d.env)
	if got := c.init.Daemon; got.Pid != daemon || got.Version != "0.3.0" || got.Instance != a.init.Daemon.Instance {
		t.Fatalf("after the hand-back the daemon is pid %d version %s instance %s; want pid %d, 0.3.0, %s", got.Pid, got.Version, got.Instance, daemon, a.init.Daemon.Instance)
	}
	var listed bool
	for _, ls := range c.list().Sessions {
		if ls.SessionID == demo.SessionID {
			listed = ls.State == "blocked" && ls.Prompt != nil && ls.Prompt.PromptID == blocked.Prompt.PromptID && ls.Pid == demo.Pid && alive(demo.Pid)
		}
	}
	if !listed {
		t.Fatalf("after the hand-back the demo is not listed blocked on %s with pid %d", blocked.Prompt.PromptID, demo.Pid)
	}
	cfrom := 0
	c.mustCall("runtime_answer", map[string]any{"sessionId": demo.SessionID, "promptId": blocked.Prompt.PromptID, "optionId": "1"}, nil)
	c.waitState(demo.SessionID, "done", &cfrom, 30*time.Second)
}

// A new binary that passes every check, takes over, serves, and is then
// killed (SIGKILL, as a crash would end it): the watchdog the code before
// left takes the sessions back (handover_watch.go). The agents keep their
// pids and their terminals; the daemon answers again as 0.3.0, a new
// process with the same instance, its last upgrade saying what happened;
// agentd upgrade exits non-zero saying so; the prompt keeps its promptId
// and answering it still works; and the agent's end is still seen, though
// it is no longer the daemon's child.
func TestUpgradeNewCodeThatDiesRightAfterTakingOver(t *testing.T) {
	binA, binB := versionedBinary(t, "0.3.0"), versionedBinary(t, "0.4.0")
	d := newDaemonEnv(t)
	// 0.4.0, ended once it has said it serves the handed-over sessions.
	dying := filepath.Join(t.TempDir(), "agentd")
	script := "#!/bin/sh\n" +
		"case \"$*\" in *--resume-fd*)\n" +
		"  (until grep -q 'daemon serving after a handover' " + d.log + "; do sleep 0.05; done; kill -KILL $$) </dev/null >/dev/null 2>&1 &\n" +
		"esac\n" +
		"exec " + binB + " \"$@\"\n"
	if err := os.WriteFile(dying, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	a := startClientWith(t, binA, "", []string{"--stdio", "--log", d.log}, d.env)
	daemon := a.init.Daemon.Pid
	demo, blocked, _ := blockedDemo(t, a, binA)

	out, code := upgradeDaemon(t, d, binA, "--binary", dying)
	t.Logf("agentd upgrade said:\n%s", out)
	if code == 0 || !strings.Contains(out, "the upgrade failed") || !strings.Contains(out, "the new agentd 0.4.0") {
		t.Errorf("agentd upgrade exited %d saying:\n%s", code, out)
	}
	c := startClientWith(t, binA, "", []string{"--stdio", "--log", d.log}, d.env)
	got := c.init.Daemon
	if got.Pid == daemon || alive(daemon) || got.Version != "0.3.0" || got.Instance != a.init.Daemon.Instance {
		t.Fatalf("after the new code died the daemon is pid %d version %s instance %s; want a new pid (not %d, which is gone), 0.3.0, instance %s",
			got.Pid, got.Version, got.Instance, daemon, a.init.Daemon.Instance)
	}
	if last := got.LastUpgrade; last == nil || last.To != "0.4.0" || !strings.Contains(last.Error, "ended within") || last.Settling {
		t.Errorf("lastUpgrade %+v, want the failed upgrade to 0.4.0, settled", last)
	}
	var listed bool
	for _, ls := range c.list().Sessions {
		if ls.SessionID == demo.SessionID {
			listed = ls.State == "blocked" && ls.Prompt != nil && ls.Prompt.PromptID == blocked.Prompt.PromptID && ls.Pid == demo.Pid && alive(demo.Pid)
		}
	}
	if !listed {
		t.Fatalf("after the recovery the demo is not listed blocked on %s with pid %d: %+v", blocked.Prompt.PromptID, demo.Pid, c.list().Sessions)
	}
	from := 0
	c.mustCall("runtime_answer", map[string]any{"sessionId": demo.SessionID, "promptId": blocked.Prompt.PromptID, "optionId": "1"}, nil)
	c.waitState(demo.SessionID, "done", &from, 30*time.Second)
	// Its end, though it is not this daemon's child: exited, status lost.
	c.mustCall("session/kill", map[string]any{"sessionId": demo.SessionID}, nil)
	c.waitState(demo.SessionID, "exited", &from, 30*time.Second)
}

// agentd stop while the code before still watches the new code: the
// daemon ends as asked, and its watchdog with it, so nothing takes the
// sessions back and no daemon comes back.
func TestStopDuringTheWatchAfterAHandover(t *testing.T) {
	binA, binB := versionedBinary(t, "0.3.0"), versionedBinary(t, "0.4.0")
	d := newDaemonEnv(t)
	a := startClientWith(t, binA, "", []string{"--stdio", "--log", d.log}, d.env)
	daemon := a.init.Daemon.Pid
	blockedDemo(t, a, binA)
	upgrade := exec.Command(binB, "upgrade")
	upgrade.Env = d.env
	var said strings.Builder
	upgrade.Stdout, upgrade.Stderr = &said, &said
	if err := upgrade.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(d.log)
		if strings.Contains(string(b), "daemon serving after a handover") && len(watchdogs(daemon)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no handover with a watchdog within 60 s; the daemon log:\n%s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop := exec.Command(binB, "stop", "--force")
	stop.Env = d.env
	if out, err := stop.CombinedOutput(); err != nil {
		t.Fatalf("agentd stop --force: %v\n%s", err, out)
	}
	waitGone(t, []int{daemon}, 20*time.Second)
	if w := watchdogs(daemon); len(w) > 0 {
		t.Fatalf("the watchdog %v outlived the daemon that was stopped", w)
	}
	if pid := d.pid(); pid != 0 {
		t.Fatalf("a daemon (pid %d) runs after agentd stop", pid)
	}
	b, _ := os.ReadFile(d.log)
	if strings.Contains(string(b), "taking the sessions back") {
		t.Fatalf("the watchdog took the sessions back after agentd stop:\n%s", b)
	}
	// agentd upgrade, still waiting out the watch, says what became of it.
	err := upgrade.Wait()
	if err == nil || !strings.Contains(said.String(), "then ended") {
		t.Errorf("agentd upgrade: %v, saying %q; want it to fail saying the daemon ended", err, said.String())
	}
}

// watchdogs are the pids of the handover watchdogs watching daemon.
func watchdogs(daemon int) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmdline), "handover-watch\x00--parent\x00"+strconv.Itoa(daemon)+"\x00") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// How long a handover takes with 50 sessions writing output, from the
// request until the daemon answers as the new code (handover_ms), and
// until five editors' forwarders started then have each listed all 50
// sessions (clients_ms), and how long the sessions stood still, from the
// freeze until the new code read their PTYs again (paused_ms). Editors
// add their own reconnect back-off (VS Code's first retry is after 1 s).
// Run with -benchtime 1x:
//
//	go test ./cmd/agentd -run XXX -bench Upgrade -benchtime 1x
func BenchmarkUpgrade50Sessions(b *testing.B) {
	const sessions, editors = 50, 5
	bin := versionedBinary(b, "0.4.0")
	d := newDaemonEnv(b)
	a := startClientWith(b, bin, "", []string{"--stdio", "--log", d.log}, d.env)
	for i := 0; i < sessions; i++ {
		a.mustCall("session/spawn", map[string]any{"argv": []string{"sh", "-c", "while :; do echo line $$ $(date +%N); sleep 0.1; done"}, "cwd": b.TempDir(), "cols": 100, "rows": 30}, nil)
	}
	var handover, clients time.Duration
	var paused int
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(bin, "upgrade")
		cmd.Env = d.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("agentd upgrade: %v\n%s", err, out)
		}
		handover += time.Since(start)
		m := regexp.MustCompile(`paused for (\d+) ms`).FindSubmatch(out)
		if m == nil {
			b.Fatalf("agentd upgrade does not say how long the sessions paused: %s", out)
		}
		ms, _ := strconv.Atoi(string(m[1]))
		paused += ms
		var wg sync.WaitGroup
		for i := 0; i < editors; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := startClientWith(b, bin, "", []string{"--stdio", "--log", d.log}, d.env)
				if n := len(c.list().Sessions); n != sessions {
					b.Errorf("an editor after the handover lists %d sessions, want %d", n, sessions)
				}
				c.close()
			}()
		}
		wg.Wait()
		clients += time.Since(start)
	}
	b.ReportMetric(float64(handover.Milliseconds())/float64(b.N), "handover_ms")
	b.ReportMetric(float64(paused)/float64(b.N), "paused_ms")
	b.ReportMetric(float64(clients.Milliseconds())/float64(b.N), "clients_ms")
}

// blockedDemo starts the demo agent of bin through c and gives it a task,
// returning it blocked on its prompt, and where c's notifications are.
func blockedDemo(t *testing.T, c *stdioClient, bin string) (spawned, stateNote, int) {
	t.Helper()
	var demo spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{bin, "demo-agent"}, "cwd": t.TempDir(), "name": "demo", "cols": 80, "rows": 24}, &demo)
	from := 0
	c.waitState(demo.SessionID, "idle", &from, 20*time.Second)
	c.mustCall("runtime_send", map[string]any{"sessionId": demo.SessionID, "text": "Add a NOTES.md file", "submit": true}, nil)
	return demo, c.waitPrompt(demo.SessionID, &from, 30*time.Second), from
}

// A new binary whose handover check hangs, or crashes midway, freezes no
// session: while it hangs, an answer to a blocked prompt is served (how
// fast is logged); at its bound the check is ended with every process it
// started, the upgrade is refused with the reason, and the daemon serves on
// as it was. The client says so and exits non-zero.
func TestUpgradeCheckThatHangsOrCrashesFreezesNothing(t *testing.T) {
	binA, binB := versionedBinary(t, "0.3.0"), versionedBinary(t, "0.4.0")
	d := newDaemonEnv(t)
	a := startClientWith(t, binA, "", []string{"--stdio", "--log", d.log}, d.env)
	daemon := a.init.Daemon.Pid
	demo, blocked, from := blockedDemo(t, a, binA)
	dir := t.TempDir()
	// Each candidate is build B but for its handover check.
	candidate := func(name, check string) string {
		p := filepath.Join(dir, name)
		script := "#!/bin/sh\nif [ \"$1 $2\" = \"serve --handover-check\" ]; then\n" + check + "\nfi\nexec " + binB + " \"$@\"\n"
		must(t, os.WriteFile(p, []byte(script), 0o755))
		return p
	}
	mark, child := filepath.Join(dir, "checking"), filepath.Join(dir, "child")
	hangs := candidate("agentd-hangs", "sleep 600 & echo $! > "+child+"; echo checking > "+mark+"; wait; exit 0")
	crashes := candidate("agentd-crashes", "echo 'reading the handover'; kill -SEGV $$")

	// The check that hangs.
	up := exec.Command(binA, "upgrade", "--binary", hangs)
	up.Env = d.env
	var out strings.Builder
	up.Stdout, up.Stderr = &out, &out
	must(t, up.Start())
	upDone := make(chan struct{})
	go func() { _ = up.Wait(); close(upDone) }()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		select {
		case <-upDone:
			t.Fatalf("agentd upgrade ended before the new binary's check began: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the new binary's handover check did not begin within 60 s of agentd upgrade")
		}
	}
	asked := time.Now()
	a.mustCall("runtime_answer", map[string]any{"sessionId": demo.SessionID, "promptId": blocked.Prompt.PromptID, "optionId": "1"}, nil)
	served := time.Since(asked)
	select {
	case <-upDone:
		t.Fatalf("the upgrade ended (%s) before the answer could be tried beside its check", out.String())
	default:
	}
	t.Logf("runtime_answer served in %s while the handover check hung", served)
	a.waitState(demo.SessionID, "done", &from, 30*time.Second)
	select {
	case <-upDone:
	case <-time.After(2 * time.Minute):
		t.Fatalf("agentd upgrade still waits 2 min after the check began; it said: %s", out.String())
	}
	if code := up.ProcessState.ExitCode(); code == 0 || !strings.Contains(out.String(), "no answer within") ||
		!strings.Contains(out.String(), "every session runs on under this daemon (version 0.3.0)") {
		t.Errorf("agentd upgrade with a check that hangs exited %d saying: %s", code, out.String())
	}
	pidText, err := os.ReadFile(child)
	must(t, err)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	for deadline := time.Now().Add(20 * time.Second); pid > 0 && alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hung check's child (pid %d) outlived its refusal by 20 s", pid)
		}
	}

	// The check that crashes.
	text, code := upgradeDaemon(t, d, binA, "--binary", crashes)
	if code == 0 || !strings.Contains(text, "segmentation fault") || !strings.Contains(text, "reading the handover") {
		t.Errorf("agentd upgrade with a check that crashes exited %d saying: %s", code, text)
	}

	c := startClientWith(t, binA, "", []string{"--stdio", "--log", d.log}, d.env)
	if got := c.init.Daemon; got.Pid != daemon || got.Version != "0.3.0" {
		t.Errorf("after the refusals the daemon is pid %d version %s; want %d, 0.3.0", got.Pid, got.Version, daemon)
	}
	var listed bool
	for _, ls := range c.list().Sessions {
		listed = listed || (ls.SessionID == demo.SessionID && ls.Pid == demo.Pid && alive(demo.Pid))
	}
	if !listed {
		t.Errorf("after the refusals the demo (pid %d) is not listed running", demo.Pid)
	}
}

// What a person reads around an upgrade: agentd version --daemon names the
// daemon's version beside the client's, its pid, socket, uptime and last
// upgrade with how long the sessions paused; a handover between builds
// that cannot be ordered (no release tag), or to the same version, goes
// ahead when asked but says so; a --binary that does not exist is named.
func TestUpgradeAsAPersonReadsIt(t *testing.T) {
	dev1, dev2, rel := versionedBinary(t, "0.1.0-dev+aaaaaaaaaaaa"), versionedBinary(t, "0.1.0-dev+bbbbbbbbbbbb"), versionedBinary(t, "0.3.0")
	d := newDaemonEnv(t)
	a := startClientWith(t, dev1, "", []string{"--stdio", "--log", d.log}, d.env)
	demo, _, _ := blockedDemo(t, a, dev1)
	run := func(bin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = d.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(filepath.Dir(bin)), strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := run(rel, "version", "--daemon")
	for _, w := range []string{"client: agentd 0.3.0", "daemon: agentd 0.1.0-dev+aaaaaaaaaaaa", "pid " + strconv.Itoa(a.init.Daemon.Pid), "socket " + d.socket, " up "} {
		if !strings.Contains(out, w) {
			t.Errorf("agentd version --daemon says %q, which lacks %q", out, w)
		}
	}
	out = run(dev2, "upgrade")
	t.Logf("agentd upgrade between untagged builds:\n%s", out)
	if !strings.Contains(out, "upgraded from 0.1.0-dev+aaaaaaaaaaaa to 0.1.0-dev+bbbbbbbbbbbb") ||
		!strings.Contains(out, "warning: 0.1.0-dev+aaaaaaaaaaaa and 0.1.0-dev+bbbbbbbbbbbb cannot be ordered") {
		t.Errorf("a handover between two untagged builds says %q; want it done, with a warning that they cannot be ordered", out)
	}
	out = run(rel, "upgrade")
	if !strings.Contains(out, "to 0.3.0") || !strings.Contains(out, "paused for") || strings.Contains(out, "warning") {
		t.Errorf("a handover to a release says %q; want it done with the pause named and no warning", out)
	}
	if out := run(rel, "upgrade"); !strings.Contains(out, "warning: the daemon ran this very version already") {
		t.Errorf("a handover to the same version says %q; want a warning", out)
	}
	out = run(rel, "version", "--daemon")
	t.Logf("agentd version --daemon after the upgrades:\n%s", out)
	if !strings.Contains(out, "daemon: agentd 0.3.0") || !strings.Contains(out, "last upgrade: 0.3.0 to 0.3.0 at ") || !strings.Contains(out, "sessions paused ") {
		t.Errorf("after the upgrades agentd version --daemon says %q", out)
	}
	cmd := exec.Command(rel, "upgrade", "--binary", "/nonexistent/agentd")
	cmd.Env = d.env
	msg, err := cmd.CombinedOutput()
	if err == nil || strings.Contains(string(msg), "lstat") || !strings.Contains(string(msg), "/nonexistent/agentd: no such file") {
		t.Errorf("agentd upgrade --binary /nonexistent/agentd: %v: %s", err, msg)
	}
	c := startClientWith(t, rel, "", []string{"--stdio", "--log", d.log}, d.env)
	var listed bool
	for _, ls := range c.list().Sessions {
		listed = listed || (ls.SessionID == demo.SessionID && ls.State == "blocked" && alive(demo.Pid))
	}
	if !listed {
		t.Errorf("after three handovers the demo (pid %d) is not listed blocked", demo.Pid)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/fixtures/fakemodel"
	"github.com/agentd/agentd/fixtures/lab"
)

// requireAgent finds an installed agent CLI (see lab.Require).
func requireAgent(t *testing.T, name string) string { t.Helper(); return lab.Require(t, name) }

// labDirs makes an agent's HOME and work folder in the test's temporary
// folder. (A private agentd's client waits, when it closes, until no
// process runs with a HOME it spawned a session with: see client.close.)
func labDirs(t *testing.T) lab.Dirs {
	t.Helper()
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// awaitNoProcessWithHome waits until no process has HOME=home in its
// environment; one still there after timeout fails the test, named, and is
// killed.
func awaitNoProcessWithHome(t testing.TB, home string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := processesWithEnv("HOME=" + home)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var what []string
			for _, p := range left {
				what = append(what, fmt.Sprintf("%d %s", p, cmdlineOf(p)))
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			t.Errorf("%d processes still ran with the agent's HOME %s %s after its session: %s (killed)", len(left), home, timeout, strings.Join(what, "; "))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// processesWithEnv lists the processes whose environment holds kv.
func processesWithEnv(kv string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, v := range strings.Split(string(env), "\x00") {
			if v == kv {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// envMap turns a launch environment into session/spawn's env: the lab's
// variables set, and the ones agentd's own environment should not pass on
// removed.
func envMap(env []string, unset ...string) map[string]*string {
	m := map[string]*string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = &v
	}
	for _, k := range unset {
		m[k] = nil
	}
	return m
}

// spawnClaude spawns the real Claude Code, offline, playing script, in
// agentd c, in folders of its own, and waits for it to be idle at its
// composer. It returns the folders, the session, the state cursor after
// idle and the fake model server.
func spawnClaude(t *testing.T, c *stdioClient, script *fakemodel.Script, opts lab.ClaudeOptions) (d lab.Dirs, s spawned, from int, srv *fakemodel.Server) {
	t.Helper()
	bin := requireAgent(t, "claude")
	d = labDirs(t)
	l, srv, err := lab.Claude(bin, d, script, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Cleanup)
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": envMap(l.Env, lab.ClaudeUnset...), "cols": 120, "rows": 40}, &s)
	c.waitState(s.SessionID, "idle", &from, 60*time.Second)
	return d, s, from, srv
}

// finishTurn checks the end of an approved turn: done (completed), the
// approved command's file exists, seen makes it idle, kill makes it exited.
func finishTurn(t *testing.T, c *stdioClient, id string, from *int, made string) {
	t.Helper()
	done := c.waitState(id, "done", from, 60*time.Second)
	if done.Outcome != "completed" {
		t.Errorf("done outcome %q (%s), want completed", done.Outcome, done.Reason)
	}
	// Done follows the command's result: its file is there by now.
	if _, err := os.Stat(made); err != nil {
		t.Errorf("the approved command did not run by the turn's end: %v; states %s", err, c.stateTrail(id))
	}
	c.mustCall("session/seen", map[string]any{"sessionId": id}, nil)
	c.waitState(id, "idle", from, 30*time.Second)
	c.mustCall("session/kill", map[string]any{"sessionId": id}, nil)
	c.waitState(id, "exited", from, 20*time.Second)
	t.Logf("states: %s", strings.Join(c.states(id), " → "))
}

// With the real Claude Code, agentd's hooks report states (stateSource
// hook) beside OSC 7501 and the screen, and a permission prompt is blocked
// from the screen seconds before Claude's Notification hook says so. The
// gap is measured from agentd's log and reported.
func TestClaudeHooksLagTheScreen(t *testing.T) {
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{
		Prompt:    "make a file",
		Reply:     fakemodel.Reply{Tool: lab.ClaudeBash("touch hooked.txt", "Create hooked.txt")},
		AfterTool: fakemodel.Reply{Text: "Created hooked.txt."},
	}}}
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	logPath := filepath.Join(t.TempDir(), "agentd.log")
	c := startAgentdLog(t, logPath)
	_, s, from, _ := spawnClaude(t, c, script, lab.ClaudeOptions{})
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "please make a file", "submit": true}, nil)
	var screenBlocked time.Time
	for screenBlocked.IsZero() {
		c.waitState(s.SessionID, "blocked", &from, 60*time.Second)
		for _, n := range c.stateNotes(s.SessionID) {
			if n.note.State == "blocked" && n.note.StateSource == "screen" && screenBlocked.IsZero() {
				screenBlocked = n.at
			}
		}
	}
	firstBlocked := time.Time{}
	for _, n := range c.stateNotes(s.SessionID) {
		if n.note.State == "blocked" {
			firstBlocked = n.at
			break
		}
	}
	// Leave the prompt open until Claude's Notification hook fires.
	hookAt := waitLogLine(t, logPath, `event=Notification`, 20*time.Second)
	b := c.waitPrompt(s.SessionID, new(int), time.Second)
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": "1"}, nil)
	c.waitState(s.SessionID, "done", &from, 60*time.Second)
	// The hooks reached agentd for the turn's start and end too. Which
	// source is first to tell a state is a race by design (OSC 7501, the
	// frame and the hook say "working" within milliseconds, and a state
	// told once is not told again), so no notified state's source is
	// asserted beyond the screen's blocked above: under load the hook lost
	// every race once ("no state came from hook").
	waitLogLine(t, logPath, `event=UserPromptSubmit`, 20*time.Second)
	waitLogLine(t, logPath, `event=Stop`, 20*time.Second)
	if !hookAt.After(screenBlocked) {
		t.Fatalf("the Notification hook (%s) came before the screen showed the prompt (%s)", hookAt, screenBlocked)
	}
	t.Logf("first blocked state %s; the screen showed the prompt %s; Claude's Notification hook came %.1f s after that",
		firstBlocked.Format("15:04:05.000"), screenBlocked.Format("15:04:05.000"), hookAt.Sub(screenBlocked).Seconds())
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

// waitLogLine waits for a line containing substr in agentd's log and returns
// the time the line carries.
func waitLogLine(t *testing.T, path, substr string, timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.Contains(line, substr) {
				continue
			}
			ts, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
			at, err := time.Parse(time.RFC3339Nano, ts)
			if err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			return at
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no log line with %q within %s", substr, timeout)
	return time.Time{}
}

// waitRequest waits until the fake model server has been asked what match
// says (what names it), and returns that request. Requests are the model's
// side of a turn: an event the screen may show late or not at all.
func waitRequest(t *testing.T, srv *fakemodel.Server, what string, match func(fakemodel.Request) bool, timeout time.Duration) fakemodel.Request {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		reqs := srv.Requests()
		for _, r := range reqs {
			if match(r) {
				return r
			}
		}
		if time.Now().After(deadline) {
			var seen []string
			for _, r := range reqs {
				seen = append(seen, fmt.Sprintf("%s last=%.60q toolResult=%v", r.Path, r.LastUser, r.ToolResult))
			}
			t.Fatalf("the model was not asked %s within %s; it was asked:\n%s", what, timeout, strings.Join(seen, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// With the real Codex, OSC 7501 and the rollout log give done/completed
// after a turn and done/interrupted after Esc; agentd's log shows the
// rollout events it took.
func TestCodexDoneAndInterruptedFromReports(t *testing.T) {
	bin := requireAgent(t, "codex")
	d := labDirs(t)
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Prompt: "say hello", Reply: fakemodel.Reply{Text: "Hello."}},
		{Prompt: "think long", Reply: fakemodel.Reply{Text: "Still thinking.", FirstByte: 30 * time.Second}},
	}}
	l, srv, err := lab.Codex(bin, d, script, lab.CodexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	logPath := filepath.Join(t.TempDir(), "agentd.log")
	c := startAgentdLog(t, logPath)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": envMap(l.Env), "cols": 120, "rows": 40}, &s)
	from := 0
	c.waitState(s.SessionID, "idle", &from, 60*time.Second)
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "say hello", "submit": true}, nil)
	if done := c.waitState(s.SessionID, "done", &from, 60*time.Second); done.Outcome != "completed" {
		t.Fatalf("first turn: done %+v, want completed", done)
	}
	waitLogLine(t, logPath, "event=log.task_complete", 10*time.Second)
	c.mustCall("session/seen", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "idle", &from, 10*time.Second)
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "think long", "submit": true}, nil)
	c.waitState(s.SessionID, "working", &from, 30*time.Second)
	// Esc once the turn waits on the model (its reply takes 30 s).
	waitRequest(t, srv, `"think long"`, func(r fakemodel.Request) bool { return strings.Contains(r.LastUser, "think long") }, 30*time.Second)
	c.mustCall("session/input", map[string]any{"sessionId": s.SessionID, "data": "\x1b"}, nil)
	if done := c.waitState(s.SessionID, "done", &from, 30*time.Second); done.Outcome != "interrupted" {
		t.Fatalf("after Esc: done %+v, want interrupted; states %v", done, c.states(s.SessionID))
	}
	waitLogLine(t, logPath, "event=log.turn_aborted", 10*time.Second)
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

// The real Claude Code, offline, outlives the client that started it:
// client A spawns it through the forwarder and starts a turn, then A's
// stdin closes; the turn goes on to the permission prompt; client B,
// connected afterwards, finds the session blocked with its options in
// session/list and answers it, and the command really runs. A client
// watching all along saw the same states as A while both were there.
// After the kill the daemon is back to its keeper and its open files.
func TestClaudeOutlivesItsClient(t *testing.T) {
	bin := requireAgent(t, "claude")
	ld := labDirs(t)
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{
		Prompt:    "make a file",
		Reply:     fakemodel.Reply{Text: "I'll create it.", Tool: lab.ClaudeBash("touch outlived.txt", "Create outlived.txt")},
		AfterTool: fakemodel.Reply{Text: "Created outlived.txt."},
	}}}
	l, _, err := lab.Claude(bin, ld, script, lab.ClaudeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	d := newDaemonEnv(t)
	a, watcher := d.forwarder(), d.forwarder()
	daemon := a.init.Daemon.Pid
	keeperOnly(t, daemon)
	baseFDs := openFDCount(t, daemon)

	var s spawned
	a.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": ld.Work, "env": envMap(l.Env, lab.ClaudeUnset...), "cols": 120, "rows": 40}, &s)
	from := 0
	a.waitState(s.SessionID, "idle", &from, 60*time.Second)
	a.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "please make a file", "submit": true}, nil)
	a.waitStateOr(s.SessionID, "working", []string{"blocked"}, &from, 60*time.Second)
	seenByA := a.stateSeq(s.SessionID)
	if code := a.close(); code != 0 {
		t.Errorf("the forwarder exited %d when its stdin closed, want 0", code)
	}

	wfrom := 0
	wb := watcher.waitPrompt(s.SessionID, &wfrom, 60*time.Second)
	if got := watcher.stateSeq(s.SessionID); len(got) < len(seenByA) || !slices.Equal(got[:len(seenByA)], seenByA) {
		t.Errorf("the watcher saw %v while A saw %v", got, seenByA)
	}
	if _, err := os.Stat(filepath.Join(ld.Work, "outlived.txt")); err == nil {
		t.Fatal("outlived.txt exists before the answer")
	}

	b := d.forwarder()
	var listed bool
	for _, ls := range b.list().Sessions {
		if ls.SessionID == s.SessionID {
			listed = true
			if ls.State != "blocked" || ls.Prompt == nil || ls.Prompt.PromptID != wb.Prompt.PromptID || ls.Prompt.Question != "Do you want to proceed?" || len(ls.Prompt.Options) < 3 {
				t.Fatalf("B lists the session as %s with prompt %+v", ls.State, ls.Prompt)
			}
		}
	}
	if !listed {
		t.Fatalf("B does not list %s", s.SessionID)
	}
	var res struct{ State string }
	b.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": wb.Prompt.PromptID, "optionId": "1"}, &res)
	bfrom := 0
	if done := b.waitState(s.SessionID, "done", &bfrom, 60*time.Second); done.Outcome != "completed" {
		t.Errorf("done outcome %q (%s)", done.Outcome, done.Reason)
	}
	if _, err := os.Stat(filepath.Join(ld.Work, "outlived.txt")); err != nil {
		t.Errorf("the command B approved did not run: %v", err)
	}
	watcher.waitState(s.SessionID, "done", &wfrom, 20*time.Second)
	b.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	b.waitState(s.SessionID, "exited", &bfrom, 20*time.Second)
	keeperOnly(t, daemon)
	if fds := openFDCount(t, daemon); fds != baseFDs {
		t.Errorf("the daemon holds %d files open, %d before the session", fds, baseFDs)
	}
	t.Logf("A saw %v; the watcher %v; B %v", seenByA, watcher.stateSeq(s.SessionID), b.stateSeq(s.SessionID))
}

// The real Claude Code in plan mode shows its plan, a numbered list, above
// "Would you like to proceed?" and a menu of its own. The prompt's options
// are the menu's and nothing of the plan; answered by the label an editor
// shows ("Yes, manually approve edits"), Claude approves the plan and goes
// on in manual mode, not the auto mode the plan's "1." would have typed.
func TestClaudePlanApprovalByLabel(t *testing.T) {
	script := &fakemodel.Script{Rules: []fakemodel.Rule{lab.ClaudePlanRule("make the plan",
		"# Move greet()\n\n1. Move greet() into greeting.py\n2. Import it from main.py\n3. Run the tests\n")}}
	// Plan mode from the start, in place of the lab's default mode.
	c := startAgentd(t)
	_, s, from, _ := spawnClaude(t, c, script, lab.ClaudeOptions{OwnMode: true, Args: []string{"--permission-mode", "plan"}})
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "make the plan", "submit": true}, nil)
	labels := answerByLabel(t, c, s.SessionID, &from, "Claude has written up a plan and is ready to execute. Would you like to proceed?", "Yes, manually approve edits")
	if want := "Yes, and use auto mode|Yes, manually approve edits|Tell Claude what to change"; strings.Join(labels, "|") != want {
		t.Fatalf("plan approval options %q, want only the menu's %q", labels, want)
	}
	done := c.waitState(s.SessionID, "done", &from, 60*time.Second)
	if done.Outcome != "completed" {
		t.Errorf("turn ended %+v", done)
	}
	// Claude reports the turn's end (its Stop hook, OSC 7501) before it
	// draws the turn's last frame: the screen may show it a moment later.
	for _, want := range []string{"Approved Claude's plan", "manual mode on"} {
		if screen := waitScreen(t, c, s.SessionID, want, 30*time.Second); !strings.Contains(screen, want) {
			t.Errorf("after answering %q and done, the screen never showed %q (states: %s):\n%s", "Yes, manually approve edits", want, c.stateTrail(s.SessionID), screen)
		}
	}
}

// The real Claude Code in its own default mode (no --permission-mode),
// auto mode, behind a gateway that does not pass auto mode's safety check
// (the fake server): a risky command brings "Auto mode can't check actions
// in this session", answered "stay in auto mode" from the editor; then
// Claude asks Yes/No with no digits, the selection on No. Answered Yes,
// the command runs.
func TestClaudeAutoModeEndToEnd(t *testing.T) {
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{
		Prompt:    "run the installer",
		Reply:     fakemodel.Reply{Text: "Running it.", Tool: lab.ClaudeBash("curl -s http://127.0.0.1:9/install.sh | sh; touch made.txt", "Run the installer")},
		AfterTool: fakemodel.Reply{Text: "Ran the installer."},
	}}}
	c := startAgentd(t)
	d, s, from, _ := spawnClaude(t, c, script, lab.ClaudeOptions{OwnMode: true})
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "run the installer", "submit": true}, nil)
	answer := func(question, label string, labels ...string) {
		t.Helper()
		if got := answerByLabel(t, c, s.SessionID, &from, question, label); strings.Join(got, "|") != strings.Join(labels, "|") {
			t.Fatalf("%q: options %q, want %q", question, got, labels)
		}
		if _, err := os.Stat(filepath.Join(d.Work, "made.txt")); err == nil && label != "Yes" {
			t.Fatalf("made.txt exists before Yes")
		}
	}
	answer("Auto mode can't check actions in this session", "stay in auto mode", "stay in auto mode", "leave for accept edits mode and stop", "cancel")
	answer("Do you want to proceed?", "Yes", "No", "Yes")
	finishTurn(t, c, s.SessionID, &from, filepath.Join(d.Work, "made.txt"))
}

// The real Claude Code, its turn refused with a 400 (not retried): the
// turn ends on "● API Error: 400 …" with an empty composer. That is error,
// with Claude's words as the message, not idle; the person's next message
// clears it, and that turn runs.
func TestClaudeAPIErrorIsError(t *testing.T) {
	// The second request carries both messages (the failed turn left no
	// reply between them): its rule comes first.
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Prompt: "second try", Reply: fakemodel.Reply{Text: "Fine now."}},
		{Prompt: "first try", Reply: fakemodel.Reply{Status: 400, Text: "tools.3.custom.input_schema: JSON schema is invalid"}},
	}}
	c := startAgentd(t)
	_, s, from, _ := spawnClaude(t, c, script, lab.ClaudeOptions{})
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "first try", "submit": true}, nil)
	e := c.waitState(s.SessionID, "error", &from, 60*time.Second)
	if !strings.Contains(e.Message, "API Error: 400 tools.3.custom.input_schema: JSON schema is invalid") {
		t.Errorf("error state %+v, want Claude's message", e)
	}
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "second try", "submit": true}, nil)
	c.waitStateOr(s.SessionID, "working", []string{"done"}, &from, 60*time.Second)
	if done := c.waitState(s.SessionID, "done", &from, 60*time.Second); done.Outcome != "completed" {
		t.Errorf("the next turn ended %+v", done)
	}
}

// The real Claude Code hands work to a background agent and waits for it
// ("✻ Waiting for 1 background agent to finish"): the session is working
// all that while, not idle or done, although Claude's Stop hook fires as
// the wait starts, and done once the agent has ended and the turn with it.
// When the agent ends Claude asks the model again with a task
// notification: done may come only after that request.
func TestClaudeBackgroundAgentIsWorking(t *testing.T) {
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Prompt: "look up the weather slowly", Reply: fakemodel.Reply{Text: "Sunny.", FirstByte: 8 * time.Second}},
		{Prompt: "research it in the background", ReplyFor: func(r fakemodel.Request) fakemodel.Reply {
			switch {
			case r.ToolResult:
				return fakemodel.Reply{Text: "It runs in the background."}
			case strings.Contains(string(r.Body), "Async agent launched successfully"):
				return fakemodel.Reply{Text: "The agent says it is sunny."}
			}
			return fakemodel.Reply{Text: "Starting an agent.", Tool: &fakemodel.ToolCall{Name: "Agent",
				Input: `{"description":"Look up the weather","prompt":"look up the weather slowly","subagent_type":"general-purpose","run_in_background":true}`}}
		}},
	}}
	notified := func(r fakemodel.Request) bool { return strings.Contains(string(r.Body), "<task-notification>") }
	c := startAgentd(t)
	_, s, from, srv := spawnClaude(t, c, script, lab.ClaudeOptions{})
	id := s.SessionID
	c.mustCall("runtime_send", map[string]any{"sessionId": id, "text": "research it in the background", "submit": true}, nil)
	c.waitState(id, "working", &from, 60*time.Second)
	firstWorking := from - 1
	// The background agent runs: it has asked the model, whose reply takes 8 s.
	waitRequest(t, srv, "the background agent's task", func(r fakemodel.Request) bool { return strings.Contains(r.LastUser, "look up the weather slowly") }, 60*time.Second)
	if screen := waitScreen(t, c, id, "Waiting for 1 background agent", 60*time.Second); !strings.Contains(screen, "Waiting for 1 background agent") {
		t.Fatalf("no background agent on screen; states %s:\n%s", c.stateTrail(id), screen)
	}
	var list struct {
		Sessions []struct{ SessionID, State, Reason string }
	}
	c.mustCall("session/list", nil, &list)
	running := !slices.ContainsFunc(srv.Requests(), notified)
	for _, ls := range list.Sessions {
		if ls.SessionID == id && ls.State != "working" && running {
			t.Errorf("while the screen shows the background agent waited on, before it ended: %s (%s), want working; states %s", ls.State, ls.Reason, c.stateTrail(id))
		}
	}
	done := c.waitState(id, "done", &from, 120*time.Second)
	if !slices.ContainsFunc(srv.Requests(), notified) {
		t.Errorf("done (%s) before the background agent ended (the model was not yet told it had); states %s; screen:\n%s", done.Reason, c.stateTrail(id), c.screen(id))
	}
	if done.Outcome != "completed" {
		t.Errorf("done %+v, want completed", done)
	}
	// From the turn's start to its end, nothing but working.
	c.mu.Lock()
	notes := c.notes[firstWorking : from-1]
	c.mu.Unlock()
	for _, n := range notes {
		var st stateNote
		if n.Method == "session/state" && json.Unmarshal(n.Params, &st) == nil && st.SessionID == id && st.State != "working" {
			t.Errorf("%s (%s) between the turn's start and its end, want working throughout; states %s", st.State, st.Reason, c.stateTrail(id))
		}
	}
	// Claude reports the turn's end before it draws its last frame.
	if screen := waitScreen(t, c, id, `Agent "Look up the weather" finished`, 30*time.Second); !strings.Contains(screen, `Agent "Look up the weather" finished`) {
		t.Errorf("done (%s), and the screen never showed the background agent finished; states %s:\n%s", done.Reason, c.stateTrail(id), screen)
	}
	t.Logf("states: %s", c.stateTrail(id))
}

// The real Claude Code asks two questions at once (AskUserQuestion, a tab
// each, then a review). Each is answered from the editor by the label it
// shows; the keys agentd types reach the right tab, and the model gets
// both answers.
func TestClaudeQuestionTabsEndToEnd(t *testing.T) {
	questions := `{"questions":[` +
		`{"question":"Which color should the button be?","header":"Color","multiSelect":false,"options":[{"label":"Red","description":"Warm"},{"label":"Blue","description":"Calm"}]},` +
		`{"question":"Which size should it be?","header":"Size","multiSelect":false,"options":[{"label":"Small","description":"24 px"},{"label":"Large","description":"48 px"}]}]}`
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{
		Prompt:    "style the button",
		Reply:     fakemodel.Reply{Text: "Two questions first.", Tool: &fakemodel.ToolCall{Name: "AskUserQuestion", Input: questions}},
		AfterTool: fakemodel.Reply{Text: "Styled."},
	}}}
	c := startAgentd(t)
	_, s, from, srv := spawnClaude(t, c, script, lab.ClaudeOptions{})
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "style the button", "submit": true}, nil)
	answer := func(question, label string) { t.Helper(); answerByLabel(t, c, s.SessionID, &from, question, label) }
	answer("Which color should the button be?", "Blue")
	answer("Which size should it be?", "Large")
	answer("Review your answers", "Submit answers")
	if done := c.waitState(s.SessionID, "done", &from, 60*time.Second); done.Outcome != "completed" {
		t.Errorf("turn ended %+v", done)
	}
	got := ""
	for _, r := range srv.Requests() {
		if r.ToolResult {
			got = r.ToolResultText
		}
	}
	if !strings.Contains(got, "Blue") || !strings.Contains(got, "Large") || strings.Contains(got, "Red") || strings.Contains(got, "Small") {
		t.Errorf("the model got %q, want the answers Blue and Large", got)
	}
}

// answerByLabel waits for the prompt asking question (a prompt before it,
// still on screen for a frame, is passed over) and answers it with the
// option labelled label, as an editor does with the label a person picked.
// It returns the prompt's labels.
func answerByLabel(t *testing.T, c *stdioClient, id string, from *int, question, label string) []string {
	t.Helper()
	b := c.waitPrompt(id, from, 60*time.Second)
	for b.Prompt.Question != question {
		b = c.waitPrompt(id, from, 30*time.Second)
	}
	option := ""
	var labels []string
	for _, o := range b.Prompt.Options {
		labels = append(labels, o.Label)
		if o.Label == label {
			option = o.ID
		}
	}
	if option == "" {
		t.Fatalf("%q: options %q have no %q; screen:\n%s", question, labels, label, c.screen(id))
	}
	// The answer returns the state after it, once the prompt has left or
	// 3 s have passed. Under load Claude Code can take longer: the state
	// stream says when the prompt went. One still there then did not take
	// the keys (Claude once let them go by); agentd lets the same promptId
	// through again, as a person would click again. It is safe: a prompt
	// that changed since refuses the retry as stale.
	for try := 1; ; try++ {
		var res struct {
			Prompt *struct {
				PromptID string `json:"promptId"`
			} `json:"prompt"`
		}
		err := c.call("runtime_answer", map[string]any{"sessionId": id, "promptId": b.Prompt.PromptID, "optionId": option}, &res)
		if err != nil && try > 1 && strings.Contains(err.Error(), "no longer the one on screen") {
			break // the keys took late, after all: the prompt moved on
		}
		if err != nil {
			t.Fatalf("runtime_answer %q with %q: %v", question, label, err)
		}
		if res.Prompt == nil || res.Prompt.PromptID != b.Prompt.PromptID || c.awaitPromptLeft(id, b.Prompt.PromptID, from, 30*time.Second) {
			break
		}
		if try == 2 {
			t.Fatalf("%q: the prompt stayed after answering %q twice; states %s; screen:\n%s", question, label, c.stateTrail(id), c.screen(id))
		}
		noteRetry(t, fmt.Sprintf("%q: the prompt was still there 30 s after answer %d (the keys did not take); answered again", question, try))
	}
	return labels
}

// logLines are agentd's log lines that hold every one of subs.
func logLines(path string, subs ...string) []string {
	data, _ := os.ReadFile(path)
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok && line != "" {
			out = append(out, line)
		}
	}
	return out
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

type spawned struct {
	SessionID string `json:"sessionId"`
	Pid       int    `json:"pid"`
	Agent     string `json:"agent"`
	Name      string `json:"name"`
	State     string `json:"state"`
	AgentInfo *struct {
		Name    string `json:"name"`
		Title   string `json:"title"`
		Version string `json:"version"`
	} `json:"agentInfo"`
}

// A real bash asks a y/n question through the real agentd binary: blocked
// with its options, runtime_send refused, a stale answer refused without a
// keystroke, the right answer goes through, the program continues.
func TestStdioGuardedAnswerOnRealProgram(t *testing.T) {
	c := startAgentd(t)
	dir := t.TempDir()
	script := `read -r -p "Delete the cache? [y/N] " a; echo "got:$a"; read -r -p "Really? [y/N] " b; echo "then:$b"; sleep 30`
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", script}, "cwd": dir, "cols": 80, "rows": 24}, &s)
	if s.Agent != "shell" || s.Pid == 0 {
		t.Fatalf("spawn = %+v", s)
	}
	from := 0
	b := c.waitState(s.SessionID, "blocked", &from, 10*time.Second)
	if b.Prompt == nil || b.Prompt.Question != "Delete the cache?" || len(b.Prompt.Options) != 2 || !b.Attention || b.StateSource != "screen" {
		t.Fatalf("blocked note = %+v", b)
	}
	err := c.call("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "hello", "submit": true}, nil)
	if rpcCode(err) != -32020 {
		t.Fatalf("runtime_send while blocked: %v", err)
	}
	err = c.call("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": "0000000000000000", "optionId": "1"}, nil)
	if rpcCode(err) != -32021 {
		t.Fatalf("stale answer: %v", err)
	}
	err = c.call("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": "9"}, nil)
	if rpcCode(err) != -32022 {
		t.Fatalf("unknown option: %v", err)
	}
	var read struct{ Rows []string }
	c.mustCall("session/read", map[string]any{"sessionId": s.SessionID}, &read)
	if strings.Contains(strings.Join(read.Rows, "\n"), "got:") {
		t.Fatalf("a refused write reached the program:\n%s", strings.Join(read.Rows, "\n"))
	}
	var res struct{ State string }
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": "1"}, &res)
	// The next question is a new prompt: blocked again, with a new id.
	b2 := c.waitState(s.SessionID, "blocked", &from, 10*time.Second)
	if b2.Prompt.Question != "Really?" || b2.Prompt.PromptID == b.Prompt.PromptID {
		t.Fatalf("second prompt = %+v", b2.Prompt)
	}
	c.mustCall("session/read", map[string]any{"sessionId": s.SessionID}, &read)
	if !strings.Contains(strings.Join(read.Rows, "\n"), "got:y") {
		t.Fatalf("answer not typed:\n%s", strings.Join(read.Rows, "\n"))
	}
	// Answering the first prompt again is stale now.
	err = c.call("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": "1"}, nil)
	if rpcCode(err) != -32021 {
		t.Fatalf("answer to a gone prompt: %v", err)
	}
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 10*time.Second)
}

// Two answers racing for one prompt: exactly one is written.
func TestStdioRacingAnswers(t *testing.T) {
	c := startAgentd(t)
	// Everything typed in the second after the answer is shown, quoted.
	script := `read -r -n 1 -p "Proceed? [y/n] " a; IFS= read -r -t 1 -d '' rest; printf '\nanswers:%s extra:%q\n' "$a" "$rest"; sleep 30`
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", script}, "cwd": t.TempDir()}, &s)
	from := 0
	b := c.waitState(s.SessionID, "blocked", &from, 10*time.Second)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			errs <- c.call("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": "1"}, nil)
		}()
	}
	ok := 0
	for range 2 {
		if err := <-errs; err == nil {
			ok++
		} else if code := rpcCode(err); code != -32021 && code != -32025 {
			t.Fatalf("losing answer: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d answers succeeded, want exactly 1", ok)
	}
	deadline := time.Now().Add(10 * time.Second)
	var read struct{ Rows []string }
	for time.Now().Before(deadline) {
		c.mustCall("session/read", map[string]any{"sessionId": s.SessionID}, &read)
		if strings.Contains(strings.Join(read.Rows, "\n"), "extra:") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	screen := strings.Join(read.Rows, "\n")
	if !strings.Contains(screen, "answers:y extra:$'\\n'") {
		t.Fatalf("want one answer and nothing extra typed:\n%s", screen)
	}
}

// After stdin closes, agentd ends every process group it started and exits.
func TestStdioEOFEndsEverySession(t *testing.T) {
	c := startAgentd(t)
	var pids []int
	for _, argv := range [][]string{
		{"sleep", "300"},
		{"bash", "--norc", "-c", "sleep 300 & sleep 300"},
		{"bash", "--norc", "-c", "trap '' HUP; sleep 300"},
	} {
		var s spawned
		c.mustCall("session/spawn", map[string]any{"argv": argv, "cwd": t.TempDir()}, &s)
		pids = append(pids, s.Pid)
	}
	all := withChildren(t, pids, 5)
	c.close()
	for _, p := range all {
		if alive(p) {
			t.Errorf("pid %d still alive after agentd exited", p)
		}
	}
}

// withChildren is pids and their children, once at least want processes in
// all run: a shell starts its children a moment after it starts.
func withChildren(t *testing.T, pids []int, want int) []int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		all := append([]int(nil), pids...)
		for _, p := range pids {
			all = append(all, childrenOf(p)...)
		}
		if len(all) >= want {
			return all
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d processes of the sessions running, found %v after 20 s", want, all)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func childrenOf(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Field 4 is the parent pid; the command name (field 2) may hold spaces.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 {
			if ppid, _ := strconv.Atoi(fields[1]); ppid == pid {
				out = append(out, n)
			}
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

var _ = json.Marshal

// A shell session follows an agent started inside it: the session takes
// the agent's rules while it runs, and is the shell again once it exits.
func TestShellSessionFollowsAgent(t *testing.T) {
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-i"}, "cwd": t.TempDir(), "env": map[string]string{"PS1": "$ "}}, &s)
	if s.Agent != "shell" {
		t.Fatalf("spawned as %q, want shell", s.Agent)
	}
	from := 0
	c.waitState(s.SessionID, "idle", &from, 10*time.Second)
	// The person starts the demo agent from the shell prompt.
	c.mustCall("session/input", map[string]any{"sessionId": s.SessionID, "data": agentdBinary(t) + " demo-agent\r"}, nil)
	// Wait for the session to take the demo's rules. Not for a reason
	// other than the shell's: a state is told when its agent, name,
	// outcome or prompt changes, and when the demo's first frame came in
	// two reads the session told idle (agent demo, still the shell's
	// reason: half a start-up screen holds the state) and then its
	// ready screen, idle again with the same key, was not told.
	idle := c.waitState(s.SessionID, "idle", &from, 10*time.Second)
	for idle.Agent != "demo" {
		idle = c.waitState(s.SessionID, "idle", &from, 10*time.Second)
	}
	var list struct {
		Sessions []spawned `json:"sessions"`
	}
	c.mustCall("session/list", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Agent != "demo" {
		t.Fatalf("while the demo agent runs the session is %+v, want agent demo", list.Sessions)
	}
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "a task", "submit": true}, nil)
	b := c.waitPrompt(s.SessionID, &from, 10*time.Second)
	if b.Reason != "demo.permission_menu" {
		t.Fatalf("blocked by %s, want the demo agent's rules", b.Reason)
	}
	// The person quits the agent (Esc cancels, Ctrl-D at the empty composer quits).
	c.mustCall("session/input", map[string]any{"sessionId": s.SessionID, "data": "\x1b"}, nil)
	c.waitState(s.SessionID, "done", &from, 10*time.Second)
	c.mustCall("session/input", map[string]any{"sessionId": s.SessionID, "data": "\x04"}, nil)
	// Typing marked the finished turn seen (idle by the demo's rules); then
	// the shell is back in the foreground.
	back := c.waitState(s.SessionID, "idle", &from, 10*time.Second)
	if strings.HasPrefix(back.Reason, "demo.") {
		back = c.waitState(s.SessionID, "idle", &from, 10*time.Second)
	}
	if back.Reason != "process.shell_foreground" || back.StateSource != "process" {
		t.Fatalf("after the agent exited: %+v, want idle from the process table", back)
	}
	c.mustCall("session/list", nil, &list)
	if list.Sessions[0].Agent != "shell" {
		t.Fatalf("after the agent exited the session is %q, want shell", list.Sessions[0].Agent)
	}
}

// agentd killed with SIGKILL cannot clean up; its keeper ends every
// session's process group, even programs that ignore SIGHUP.
func TestKilledAgentdLeavesNoAgents(t *testing.T) {
	c := startAgentd(t)
	var pids []int
	for _, argv := range [][]string{
		{"sleep", "300"},
		{"bash", "--norc", "-c", "trap '' HUP; sleep 300 & sleep 300"},
	} {
		var s spawned
		c.mustCall("session/spawn", map[string]any{"argv": argv, "cwd": t.TempDir()}, &s)
		pids = append(pids, s.Pid)
	}
	all := withChildren(t, pids, 4)
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		left := 0
		for _, p := range all {
			if alive(p) {
				left++
			}
		}
		if left == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range all {
		if alive(p) {
			t.Errorf("pid %d outlived a killed agentd", p)
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// A prompt answered with arrows counted from where it starts its selection
// (OpenCode's kind: the selection shows only as colour) is not answered
// once a person has typed at it: the selection may have moved.
func TestPositionalAnswerRefusedAfterTyping(t *testing.T) {
	cfg := t.TempDir()
	rules := filepath.Join(cfg, "agentd", "rules")
	if err := os.MkdirAll(rules, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `name = "toy"
[[rule]]
id = "menu"
state = "blocked"
match = ['^Proceed \d\?  Allow  Deny$']
prompt = "menu"
[prompt.menu]
kind = "permission"
question = '^(Proceed \d\?)'
option = '  (?P<label>Allow|Deny)'
keys = "<right*{i}><enter>"
`
	if err := os.WriteFile(filepath.Join(rules, "toy.toml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", cfg)
	c := startAgentd(t)
	// stty -echo: what the person types does not show, as in a real menu.
	// It is set once before any prompt is drawn (read -s turned echo off
	// only after printing the prompt, and under load the arrow came in
	// between and was echoed as ^[[C, so the prompt no longer read as one).
	// Each prompt reads differently: the second may follow the first in
	// the same read, with no other state between, and is told apart by
	// its own promptId.
	script := `stty -echo; for i in 1 2; do printf 'Proceed %s?  Allow  Deny' $i; IFS= read -r a; printf '\ngot:%q\n' "$a"; done; sleep 30`
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", script}, "cwd": t.TempDir(), "agent": "toy"}, &s)
	from := 0
	b := c.waitPrompt(s.SessionID, &from, 10*time.Second)
	// The person presses a key at the prompt.
	c.mustCall("session/input", map[string]any{"sessionId": s.SessionID, "data": "\x1b[C"}, nil)
	time.Sleep(300 * time.Millisecond)
	err := c.call("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": "1"}, nil)
	if rpcCode(err) != -32024 || !strings.Contains(err.Error(), "typed at this prompt") {
		t.Fatalf("answer after typing: %v, want -32024", err)
	}
	c.mustCall("session/input", map[string]any{"sessionId": s.SessionID, "data": "\r"}, nil)
	// The next prompt is untouched: answering it works.
	b2 := c.waitPrompt(s.SessionID, &from, 10*time.Second)
	if b2.Prompt.Question != "Proceed 2?" {
		t.Fatalf("second prompt %+v, want Proceed 2?", b2.Prompt)
	}
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b2.Prompt.PromptID, "optionId": "2"}, nil)
	deadline := time.Now().Add(20 * time.Second)
	screen := c.screen(s.SessionID)
	for strings.Count(screen, `got:$'\E[C'`) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		screen = c.screen(s.SessionID)
	}
	if strings.Count(screen, `got:$'\E[C'`) != 2 {
		t.Fatalf("want the person's arrow, then the answer's, on screen:\n%s", screen)
	}
}

// The first state notification names the spawn result's state as previous.
func TestFirstNotificationPrevious(t *testing.T) {
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{"sleep", "5"}, "cwd": t.TempDir()}, &s)
	from := 0
	n := c.waitState(s.SessionID, "idle", &from, 10*time.Second)
	if s.State != "working" || n.Previous != "working" {
		t.Fatalf("spawned %q, first notification previous %q; want working for both", s.State, n.Previous)
	}
}

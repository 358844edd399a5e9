package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Faults over the real binary with real processes. Covered elsewhere, not
// repeated here: agentd killed with SIGKILL (TestKilledAgentdLeavesNoAgents,
// stdio_test.go), stdin closing with programs that ignore SIGHUP
// (TestStdioEOFEndsEverySession), a panic inside one session's work
// (sessions/fault_test.go), 1000 spawn/kill cycles (sessions/leak_test.go).

// rssLimitKB bounds agentd's resident memory under the floods below. An
// idle agentd holds ~12 MB and ~26 MB at the peak of these tests; the
// floods push 120-200 MB through it, so keeping them (or the output queued
// for an editor that does not read: 118 MB of it) would cross the bound.
const rssLimitKB = 100 << 10

// stepper is a bash session asking "Step N? [y/N]" again and again; each
// answer brings a new prompt, so a new state.
type stepper struct {
	a    *rawAgentd
	s    spawned
	step int
}

func startStepper(t *testing.T, a *rawAgentd, from *int) *stepper {
	t.Helper()
	st := &stepper{a: a, step: 1}
	a.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", stepperScript}, "cwd": t.TempDir(), "cols": 80, "rows": 24}, &st.s)
	a.waitState(st.s.SessionID, from, 30*time.Second, "blocked on Step 1?", func(s stateNote) bool {
		return s.State == "blocked" && s.Prompt != nil && s.Prompt.Question == "Step 1?"
	})
	return st
}

// next answers the prompt with typed input and waits for the next one.
func (st *stepper) next(from *int) {
	st.a.t.Helper()
	st.a.mustCall("session/input", map[string]any{"sessionId": st.s.SessionID, "data": "y\r"}, nil)
	st.step++
	q := fmt.Sprintf("Step %d?", st.step)
	st.a.waitState(st.s.SessionID, from, 60*time.Second, "blocked on "+q, func(s stateNote) bool {
		return s.State == "blocked" && s.Prompt != nil && s.Prompt.Question == q
	})
}

func (a *rawAgentd) list() map[string]Session {
	a.t.Helper()
	var res struct {
		Sessions []Session `json:"sessions"`
	}
	a.mustCall("session/list", nil, &res)
	out := map[string]Session{}
	for _, s := range res.Sessions {
		out[s.SessionID] = s
	}
	return out
}

// Session is session/list's view of a session.
type Session struct {
	SessionID string          `json:"sessionId"`
	Pid       int             `json:"pid"`
	State     string          `json:"state"`
	Reason    string          `json:"reason"`
	Prompt    json.RawMessage `json:"prompt"`
	Exit      *struct {
		ExitCode int    `json:"exitCode"`
		Signal   string `json:"signal"`
	} `json:"exit"`
}

// readChars is how many bytes agentd has read in all (/proc/PID/io).
func readChars(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		t.Fatalf("agentd's /proc io: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	t.Fatal("no rchar in /proc io")
	return 0
}

// An agent killed while it waits on a permission prompt: its session is
// exited by the signal, the prompt is gone (an answer to it is refused as
// exited), and another session is untouched.
func TestFaultAgentDiesMidPrompt(t *testing.T) {
	a := startRaw(t)
	from := 0
	other := startStepper(t, a, &from)
	var demo spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{agentdBinary(t), "demo-agent"}, "cwd": t.TempDir(), "cols": 100, "rows": 30}, &demo)
	a.waitState(demo.SessionID, &from, 30*time.Second, "idle", func(s stateNote) bool { return s.State == "idle" })
	a.mustCall("runtime_send", map[string]any{"sessionId": demo.SessionID, "text": "a task", "submit": true}, nil)
	b := a.waitState(demo.SessionID, &from, 30*time.Second, "blocked with options", func(s stateNote) bool {
		return s.State == "blocked" && s.Prompt != nil && len(s.Prompt.Options) > 0
	})
	if err := syscall.Kill(demo.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ex := a.waitState(demo.SessionID, &from, 30*time.Second, "exited", func(s stateNote) bool { return s.State == "exited" })
	if ex.Reason != "process.signal" || ex.Previous != "blocked" || ex.Prompt != nil {
		t.Errorf("exit note %+v, want exited by process.signal from blocked, no prompt", ex)
	}
	a.waitFor("session/exited with SIGKILL", &from, 30*time.Second, func(m rawMsg) bool {
		return m.Method == "session/exited" && strings.Contains(string(m.Params), `"`+demo.SessionID+`"`) && strings.Contains(string(m.Params), `"SIGKILL"`)
	})
	s := a.list()[demo.SessionID]
	if s.State != "exited" || s.Exit == nil || s.Exit.Signal != "SIGKILL" || (len(s.Prompt) > 0 && string(s.Prompt) != "null") {
		t.Errorf("session/list after the kill: %+v", s)
	}
	if err := a.call("runtime_answer", map[string]any{"sessionId": demo.SessionID, "promptId": b.Prompt.PromptID, "optionId": "1"}, nil); err == nil || err.Code != -32011 {
		t.Errorf("answer to the dead agent's prompt: %v, want -32011", err)
	}
	if err := a.call("session/input", map[string]any{"sessionId": demo.SessionID, "data": "1"}, nil); err == nil || err.Code != -32011 {
		t.Errorf("input to the dead agent: %v, want -32011", err)
	}
	// The other session goes on.
	other.next(&from)
	other.next(&from)
	if st := a.list()[other.s.SessionID]; st.State != "blocked" {
		t.Errorf("other session %+v", st)
	}
	if alive(demo.Pid) {
		t.Errorf("the killed agent %d is still there", demo.Pid)
	}
}

// Floods: `yes` and raw random bytes pour out of two sessions while a
// quiet third one is answered and keeps reporting its states; agentd's
// memory stays bounded and it keeps answering.
func TestFaultFloods(t *testing.T) {
	a := startRaw(t)
	from := 0
	quiet := startStepper(t, a, &from)
	var yes, random spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{"yes", "agentd flood"}, "cwd": t.TempDir()}, &yes)
	a.mustCall("session/spawn", map[string]any{"argv": []string{"cat", "/dev/urandom"}, "cwd": t.TempDir()}, &random)
	// The editor watches one flood's output too.
	a.mustCall("session/subscribe", map[string]any{"sessionId": yes.SessionID, "output": true}, nil)
	start := readChars(t, a.pid())
	const volume = 200 << 20 // bytes agentd must read through the floods
	deadline := time.Now().Add(5 * time.Minute)
	maxRSS, answered := 0, 0
	for readChars(t, a.pid())-start < volume {
		if time.Now().After(deadline) {
			t.Fatalf("agentd read only %d MB of the floods in 5 minutes", (readChars(t, a.pid())-start)>>20)
		}
		quiet.next(&from)
		answered++
		maxRSS = max(maxRSS, rssKB(t, a.pid()))
		if maxRSS > rssLimitKB {
			t.Fatalf("agentd's RSS %d kB over %d kB under the floods", maxRSS, rssLimitKB)
		}
		time.Sleep(100 * time.Millisecond)
	}
	read := readChars(t, a.pid()) - start
	list := a.list()
	for _, id := range []string{yes.SessionID, random.SessionID} {
		if list[id].State == "exited" {
			t.Errorf("flood %s exited: %+v", id, list[id])
		}
	}
	outputs := 0
	for _, m := range a.messages() {
		if m.Method == "session/output" {
			outputs++
		}
	}
	if outputs == 0 {
		t.Error("no session/output from the subscribed flood")
	}
	// Both floods end on session/kill.
	for _, s := range []spawned{yes, random} {
		a.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
		a.waitState(s.SessionID, &from, 60*time.Second, "exited", func(n stateNote) bool { return n.State == "exited" })
	}
	quiet.next(&from)
	t.Logf("floods: agentd read %d MB; the quiet session answered %d prompts meanwhile; %d output notifications; peak RSS %d kB", read>>20, answered, outputs, maxRSS)
}

// A program that ignores SIGHUP: session/kill (SIGHUP by default) still
// ends it — agentd follows with SIGKILL after the grace period.
func TestFaultAgentIgnoresSIGHUP(t *testing.T) {
	a := startRaw(t)
	from := 0
	var s spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", `trap "" HUP; sleep 1000 & wait; sleep 1000`}, "cwd": t.TempDir()}, &s)
	var group []int
	deadline := time.Now().Add(30 * time.Second)
	for len(group) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the session's sleep did not start")
		}
		time.Sleep(50 * time.Millisecond)
		group = childrenOf(s.Pid)
	}
	group = append(group, s.Pid)
	a.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	ex := a.waitState(s.SessionID, &from, 60*time.Second, "exited", func(n stateNote) bool { return n.State == "exited" })
	if ex.Reason != "process.signal" {
		t.Errorf("exit %+v, want process.signal", ex)
	}
	if st := a.list()[s.SessionID]; st.Exit == nil || st.Exit.Signal != "SIGKILL" {
		t.Errorf("exit %+v, want SIGKILL (SIGHUP was ignored)", st.Exit)
	}
	waitGone(t, group, 30*time.Second)
}

// A program that does not read its input: a paste too big for the PTY
// stays pending, but only that session's input waits — every other
// request is answered, another session takes input, and session/kill ends
// the stuck one (its pending input is then refused as exited).
func TestFaultAgentNotReadingInput(t *testing.T) {
	a := startRaw(t)
	from := 0
	other := startStepper(t, a, &from)
	var s spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", "stty raw -echo; touch ready; exec sleep 1000"}, "cwd": t.TempDir()}, &s)
	waitFile(t, filepath.Join(sessionCwd(t, a, s), "ready"))
	paste := a.request("session/input", map[string]any{"sessionId": s.SessionID, "data": strings.Repeat("x", 4<<20)})
	more := a.request("session/input", map[string]any{"sessionId": s.SessionID, "data": "and more"})
	// Everything else is served meanwhile.
	for range 3 {
		other.next(&from)
	}
	if st := a.list()[s.SessionID]; st.State == "exited" {
		t.Fatalf("the stuck session exited by itself: %+v", st)
	}
	for _, id := range []int{paste, more} {
		for _, m := range a.messages() {
			if string(m.ID) == strconv.Itoa(id) {
				t.Fatalf("input %d answered while the program reads nothing: %s", id, describe([]rawMsg{m}))
			}
		}
	}
	a.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	a.waitState(s.SessionID, &from, 60*time.Second, "exited", func(n stateNote) bool { return n.State == "exited" })
	for _, id := range []int{paste, more} {
		if m := a.reply(id); m.Error == nil {
			t.Errorf("input %d to a killed program answered %s, want an error", id, m.Result)
		}
	}
	other.next(&from)
}

// sessionCwd is the cwd a session was spawned in.
func sessionCwd(t *testing.T, a *rawAgentd, s spawned) string {
	t.Helper()
	var res struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Cwd       string `json:"cwd"`
		} `json:"sessions"`
	}
	a.mustCall("session/list", nil, &res)
	for _, x := range res.Sessions {
		if x.SessionID == s.SessionID {
			return x.Cwd
		}
	}
	t.Fatalf("no session %s", s.SessionID)
	return ""
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An editor that stops reading stdout while one session floods output it
// subscribed to and another goes through one prompt after another: agentd
// does not die or grow (output past its 4 MiB bound is dropped, states
// coalesce latest-wins), and once the editor reads again it gets the
// latest state and an output
// notification that says how much was dropped, carrying a repaint.
func TestFaultEditorStopsReading(t *testing.T) {
	a := startRaw(t)
	from := 0
	dir := t.TempDir()
	// 120 MB of text, then a mark, then quiet.
	var flood spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", "head -c 90000000 /dev/urandom | base64 -w 100; touch flooded; exec sleep 1000"}, "cwd": dir}, &flood)
	a.mustCall("session/subscribe", map[string]any{"sessionId": flood.SessionID, "output": true}, nil)
	// Once told to go, prompts Auto 1? … Auto 8?, then Final?.
	script := `while [ ! -e go ]; do sleep 0.05; done
for i in 1 2 3 4 5 6 7 8; do printf '\033[2J\033[HAuto %d? [y/N] ' $i; sleep 0.2; done
printf '\033[2J\033[HFinal? [y/N] '; touch reached; read -r a; echo "got:$a"; sleep 1000`
	var steps spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", script}, "cwd": dir, "cols": 80, "rows": 24}, &steps)
	a.waitState(steps.SessionID, &from, 30*time.Second, "a first state", func(stateNote) bool { return true })
	baseRSS := rssKB(t, a.pid())

	a.pause()
	// The editor is not reading: agentd fills the pipe and must hold back.
	// (The pipe is full when what waits in it stops growing.)
	deadline := time.Now().Add(2 * time.Minute)
	for last, same := -1, 0; same < 10; {
		n := a.pipeBacklog()
		if n >= 16<<10 && n == last {
			same++
		} else {
			same = 0
		}
		last = n
		if time.Now().After(deadline) {
			t.Fatalf("agentd did not fill stdout (%d bytes waiting)", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	maxRSS := 0
	for _, mark := range []string{"reached", "flooded"} {
		deadline := time.Now().Add(5 * time.Minute)
		for {
			maxRSS = max(maxRSS, rssKB(t, a.pid()))
			if _, err := os.Stat(filepath.Join(dir, mark)); err == nil {
				break
			}
			if time.Now().After(deadline) || !a.alive() {
				t.Fatalf("no %s within 5 minutes (agentd alive: %v)", mark, a.alive())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(500 * time.Millisecond) // Final? is classified while nobody reads
	maxRSS = max(maxRSS, rssKB(t, a.pid()))
	if !a.alive() {
		t.Fatal("agentd died while the editor was not reading")
	}
	if maxRSS > rssLimitKB {
		t.Errorf("agentd's RSS reached %d kB (%d kB before) while the editor did not read", maxRSS, baseRSS)
	}
	mark := len(a.messages())
	a.resume()

	// The latest state arrives, replacing those the editor never read.
	final := a.waitState(steps.SessionID, &from, 60*time.Second, "blocked on Final?", func(n stateNote) bool {
		return n.State == "blocked" && n.Prompt != nil && n.Prompt.Question == "Final?"
	})
	var stepNotes []stateNote
	for _, m := range a.messages()[mark:] {
		var n stateNote
		if m.Method == "session/state" && json.Unmarshal(m.Params, &n) == nil && n.SessionID == steps.SessionID {
			stepNotes = append(stepNotes, n)
			if n.Prompt != nil && n.Prompt.Question == "Final?" {
				break
			}
		}
	}
	if len(stepNotes) > 3 {
		t.Errorf("%d state notifications for 9 prompts drawn while the editor did not read, want them coalesced: %+v", len(stepNotes), stepNotes)
	}
	// Output past the bound was dropped, said so, and healed by a repaint.
	dfrom := mark
	dropped := a.waitFor("session/output with dropped", &dfrom, 60*time.Second, func(m rawMsg) bool {
		return m.Method == "session/output" && len(m.Params) > 0
	})
	var out struct {
		SessionID string `json:"sessionId"`
		Data      string `json:"data"`
		Dropped   int    `json:"dropped"`
	}
	if err := json.Unmarshal(dropped.Params, &out); err != nil {
		t.Fatal(err)
	}
	if out.SessionID != flood.SessionID || out.Dropped < 10<<20 || strings.TrimSpace(out.Data) == "" {
		t.Errorf("dropped marker: session %s, dropped %d, repaint %d bytes; want %s, > 10 MiB, a repaint", out.SessionID, out.Dropped, len(out.Data), flood.SessionID)
	}
	queuedOut := 0
	for _, m := range a.messages()[mark:] {
		if m.Method == "session/output" && len(m.Params) == 0 {
			queuedOut += m.size
		}
	}
	// Served again: the answer goes through.
	a.mustCall("runtime_answer", map[string]any{"sessionId": steps.SessionID, "promptId": final.Prompt.PromptID, "optionId": "1"}, nil)
	for deadline := time.Now().Add(time.Minute); !strings.Contains(a.screenOf(steps.SessionID), "got:y"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("answer not typed:\n%s", a.screenOf(steps.SessionID))
		}
	}
	t.Logf("editor stopped reading: %d state notes for 9 prompts, %d bytes dropped, %d bytes of output queued meanwhile, RSS %d kB before, peak %d kB", len(stepNotes), out.Dropped, queuedOut, baseRSS, maxRSS)
}

func (a *rawAgentd) screenOf(sessionID string) string {
	a.t.Helper()
	var r struct{ Rows []string }
	a.mustCall("session/read", map[string]any{"sessionId": sessionID}, &r)
	return strings.Join(r.Rows, "\n")
}

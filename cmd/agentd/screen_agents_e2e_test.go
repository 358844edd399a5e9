package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/fixtures/fakemodel"
	"github.com/agentd/agentd/fixtures/lab"
)

// interactiveEnv is a launch's environment for session/spawn, with CI
// unset: agentd passes its own environment on, and under CI=true (as
// .ci/run sets) Ink-based agents stop redrawing and taking keys (Grok
// stalled on its logo) and Copilot draws another composer. A person's
// agent does not run with CI set.
func interactiveEnv(env []string) map[string]*string { return envMap(env, "CI") }

// screenTurn is one permission turn of a screen-read agent, driven through
// the real agentd: runtime_send → working → blocked with the options the
// recordings have → runtime_answer by the option's label → the turn's end.
type screenTurn struct {
	send     string   // the task typed
	question string   // the prompt's question
	options  []string // its option labels, in order
	answer   string   // the label answered
	file     string   // the work-folder file the command makes
	made     bool     // whether the answer lets it be made
	outcome  string   // the done outcome that ends the turn
}

// playScreenTurn runs t on session id and checks it: the prompt as
// recorded, a refused runtime_send while blocked, the answer by label, the
// file there or not, done with the outcome, then seen → idle.
func playScreenTurn(t *testing.T, c *client, id string, from *int, work string, turn screenTurn) {
	t.Helper()
	c.mustCall("runtime_send", map[string]any{"sessionId": id, "text": turn.send, "submit": true}, nil)
	// working, then blocked; a tool call that comes at once may leave no
	// screen between the two.
	b := nextState(c, id, from, 60*time.Second)
	for b.State != "blocked" || b.Prompt == nil || len(b.Prompt.Options) == 0 {
		if b.State != "working" && b.State != "blocked" {
			t.Fatalf("after sending %q: %s (%s), want working or blocked; states %s", turn.send, b.State, b.Reason, strings.Join(c.states(id), " → "))
		}
		b = nextState(c, id, from, 60*time.Second)
	}
	var labels []string
	for _, o := range b.Prompt.Options {
		labels = append(labels, o.Label)
	}
	if b.Prompt.Question != turn.question || !slices.Equal(labels, turn.options) {
		t.Fatalf("blocked prompt: question %q options %q; want %q %q; screen:\n%s", b.Prompt.Question, labels, turn.question, turn.options, c.screen(id))
	}
	if err := c.call("runtime_send", map[string]any{"sessionId": id, "text": "1", "submit": false}, nil); rpcCode(err) != -32020 {
		t.Fatalf("runtime_send while blocked: %v", err)
	}
	path := filepath.Join(work, turn.file)
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("%s exists before the answer", turn.file)
	}
	optionID := ""
	for _, o := range b.Prompt.Options {
		if o.Label == turn.answer {
			optionID = o.ID
		}
	}
	if optionID == "" {
		t.Fatalf("no option %q in %q", turn.answer, labels)
	}
	var res struct{ State string }
	c.mustCall("runtime_answer", map[string]any{"sessionId": id, "promptId": b.Prompt.PromptID, "optionId": optionID}, &res)
	// The box goes a frame before the turn's end is drawn: done may come
	// first with outcome unknown, then with the outcome the screen shows.
	deadline := time.Now().Add(60 * time.Second)
	for done := c.waitState(id, "done", from, 60*time.Second); done.Outcome != turn.outcome; done = c.waitState(id, "done", from, time.Until(deadline)) {
		if time.Now().After(deadline) {
			t.Fatalf("no done with outcome %s; states %s; screen:\n%s", turn.outcome, strings.Join(c.states(id), " → "), c.screen(id))
		}
	}
	if _, err := os.Stat(path); (err == nil) != turn.made {
		t.Errorf("after answering %q: %s exists = %v, want %v", turn.answer, turn.file, err == nil, turn.made)
	}
	c.mustCall("session/seen", map[string]any{"sessionId": id}, nil)
	c.waitState(id, "idle", from, 10*time.Second)
}

// waitIdleNoDone waits for idle after a first-run prompt was answered: no
// task was given, so no turn ended, and no state on the way is done.
func waitIdleNoDone(t *testing.T, c *client, id string, from *int) {
	t.Helper()
	start := *from
	c.waitState(id, "idle", from, 30*time.Second)
	c.mu.Lock()
	notes := c.notes[start:*from]
	c.mu.Unlock()
	for _, n := range notes {
		var st stateNote
		if n.Method == "session/state" && json.Unmarshal(n.Params, &st) == nil && st.SessionID == id && st.State == "done" {
			t.Fatalf("done (%s) after a first-run prompt answered before any task; states %s", st.Reason, strings.Join(c.states(id), " → "))
		}
	}
}

// The real Copilot CLI 1.0.102, offline with its own model, hosted by the
// real agentd: the folder trust dialog answered from the editor → idle
// (no task was given, so no turn ended) → a shell command approved (it
// runs) → done, completed (the model's reply is the last block) → a second
// one rejected with option 3, whose key is Esc (it does not run) → done,
// interrupted.
func TestCopilotEndToEnd(t *testing.T) {
	bin := requireAgent(t, "copilot")
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{
			Prompt:    "make the file",
			Reply:     fakemodel.Reply{Tool: lab.CopilotBash("sleep 1 && touch made.txt", "Create made.txt")},
			AfterTool: fakemodel.Reply{Text: "Created made.txt."},
		},
		{
			Prompt:    "make another",
			Reply:     fakemodel.Reply{Tool: lab.CopilotBash("touch other.txt", "Create other.txt")},
			AfterTool: fakemodel.Reply{Text: "Created other.txt."},
		},
	}}
	l, srv, err := lab.Copilot(bin, d, script)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	defer func() {
		if t.Failed() {
			for i, r := range srv.Requests() {
				t.Logf("model request %d: %s last=%q toolResult=%v", i, r.Path, r.LastUser, r.ToolResult)
			}
		}
	}()
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": interactiveEnv(l.Env), "cols": 120, "rows": 40}, &s)
	if s.Agent != "copilot" {
		t.Fatalf("identified as %q, want copilot", s.Agent)
	}
	from := 0
	trust := c.waitPrompt(s.SessionID, &from, 90*time.Second)
	if trust.Prompt.Kind != "trust" || trust.Prompt.Question != "Do you trust the files in this folder?" {
		t.Fatalf("first prompt = %+v, want the folder trust dialog", trust.Prompt)
	}
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": trust.Prompt.PromptID, "optionId": "1"}, nil)
	waitIdleNoDone(t, c, s.SessionID, &from)
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send:     "please make the file",
		question: "Do you want to run this command?",
		options:  []string{"Yes", "Yes, and don't ask again for `sleep` and `touch` in this directory", "No, and tell Copilot what to do differently"},
		answer:   "Yes", file: "made.txt", made: true, outcome: "completed",
	})
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send:     "now make another",
		question: "Do you want to run this command?",
		options:  []string{"Yes", "Yes, and don't ask again for `touch` in this directory", "No, and tell Copilot what to do differently"},
		answer:   "No, and tell Copilot what to do differently", file: "other.txt", made: false, outcome: "interrupted",
	})
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

// The real Qwen Code 0.24.4, offline, asking first, hosted by the real
// agentd: a shell command approved (it runs) → done → another rejected
// with Esc (it does not run; the tool row says so) → done, interrupted.
func TestQwenEndToEnd(t *testing.T) {
	bin := requireAgent(t, "qwen")
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{
			Prompt:    "make the file",
			Reply:     fakemodel.Reply{Tool: lab.QwenShell("touch made.txt", "Create made.txt")},
			AfterTool: fakemodel.Reply{Text: "Created made.txt."},
		},
		{
			Prompt:    "make another",
			Reply:     fakemodel.Reply{Tool: lab.QwenShell("touch other.txt", "Create other.txt")},
			AfterTool: fakemodel.Reply{Text: "Created other.txt."},
		},
	}}
	l, srv, err := lab.Qwen(bin, d, script)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	defer func() {
		if t.Failed() {
			for i, r := range srv.Requests() {
				t.Logf("model request %d: %s last=%.60q toolResult=%v", i, r.Path, r.LastUser, r.ToolResult)
			}
		}
	}()
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": interactiveEnv(l.Env), "cols": 120, "rows": 40}, &s)
	if s.Agent != "qwen" {
		t.Fatalf("identified as %q, want qwen", s.Agent)
	}
	from := 0
	c.waitState(s.SessionID, "idle", &from, 90*time.Second)
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send:     "please make the file",
		question: "Allow execution of: 'touch'?",
		options:  []string{"Yes, allow once", "Always allow run 'touch *' commands in this project", "Always allow run 'touch *' commands for this user", "No, suggest changes"},
		answer:   "Yes, allow once", file: "made.txt", made: true, outcome: "completed",
	})
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send:     "now make another",
		question: "Allow execution of: 'touch'?",
		options:  []string{"Yes, allow once", "Always allow run 'touch *' commands in this project", "Always allow run 'touch *' commands for this user", "No, suggest changes"},
		answer:   "No, suggest changes", file: "other.txt", made: false, outcome: "interrupted",
	})
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

// The real Pi 0.73.1, offline, hosted by the real agentd. Pi never asks:
// a command runs during the turn (working) → done → a reply that ends in
// a y/n question is prose → done. No state along the way is blocked.
func TestPiEndToEnd(t *testing.T) {
	bin := requireAgent(t, "pi")
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{
			Prompt:    "make the file",
			Reply:     fakemodel.Reply{Tool: lab.PiBash("sleep 2 && touch made.txt")},
			AfterTool: fakemodel.Reply{Text: "Created made.txt."},
		},
		{Prompt: "what next", Reply: fakemodel.Reply{Text: "I can also delete the file.\nShall I continue? (y/n)"}},
	}}
	l, _, err := lab.Pi(bin, d, script)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": interactiveEnv(l.Env), "cols": 120, "rows": 40}, &s)
	if s.Agent != "pi" {
		t.Fatalf("identified as %q, want pi", s.Agent)
	}
	from := 0
	c.waitState(s.SessionID, "idle", &from, 60*time.Second)
	for _, task := range []string{"please make the file", "what next?"} {
		c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": task, "submit": true}, nil)
		c.waitState(s.SessionID, "working", &from, 30*time.Second)
		c.waitState(s.SessionID, "done", &from, 60*time.Second)
		c.mustCall("session/seen", map[string]any{"sessionId": s.SessionID}, nil)
		c.waitState(s.SessionID, "idle", &from, 10*time.Second)
	}
	if _, err := os.Stat(filepath.Join(d.Work, "made.txt")); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
	if !strings.Contains(c.screen(s.SessionID), "Shall I continue? (y/n)") {
		t.Errorf("the y/n reply is not on screen:\n%s", c.screen(s.SessionID))
	}
	states := c.states(s.SessionID)
	for _, st := range states {
		if strings.HasPrefix(st, "blocked") {
			t.Errorf("Pi never asks, but agentd said %s; states %s", st, strings.Join(states, " → "))
		}
	}
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

// The real Kilo 7.7.9 (an OpenCode fork), offline, hosted by the real
// agentd and identified as Kilo, not OpenCode: a command approved (it
// runs) → done, completed → another rejected (it does not run).
func TestKiloEndToEnd(t *testing.T) {
	bin := lab.KiloBin()
	if _, err := os.Stat(bin); err != nil {
		requireAgent(t, "kilo") // skips or fails with the install hint
	}
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{
			Prompt:    "make the file",
			Reply:     fakemodel.Reply{Tool: lab.OpenCodeBash("touch made.txt", "Create made.txt")},
			AfterTool: fakemodel.Reply{Text: "Created made.txt."},
		},
		{
			Prompt:    "make another",
			Reply:     fakemodel.Reply{Tool: lab.OpenCodeBash("touch other.txt", "Create other.txt")},
			AfterTool: fakemodel.Reply{Text: "Created other.txt."},
		},
	}}
	l, _, err := lab.Kilo(bin, d, script)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": interactiveEnv(l.Env), "cols": 120, "rows": 40}, &s)
	if s.Agent != "kilo" {
		t.Fatalf("identified as %q, want kilo", s.Agent)
	}
	from := 0
	c.waitState(s.SessionID, "idle", &from, 90*time.Second)
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send: "please make the file", question: "Create made.txt", options: []string{"Allow once", "Allow always", "Reject"},
		answer: "Allow once", file: "made.txt", made: true, outcome: "completed",
	})
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "now make another", "submit": true}, nil)
	b := c.waitPrompt(s.SessionID, &from, 60*time.Second)
	if b.Prompt.Question != "Create other.txt" {
		t.Fatalf("second prompt = %+v", b.Prompt)
	}
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": optionByLabel(t, b, "Reject")}, nil)
	// Kilo may ask what to do instead; confirming with no text rejects.
	for {
		n := nextState(c, s.SessionID, &from, 30*time.Second)
		if n.State == "blocked" && n.Prompt != nil && n.Prompt.Question == "Tell Kilo what to do differently" {
			c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": n.Prompt.PromptID, "optionId": optionByLabel(t, n, "confirm")}, nil)
			continue
		}
		if n.State == "done" || n.State == "idle" {
			break
		}
	}
	if _, err := os.Stat(filepath.Join(d.Work, "other.txt")); err == nil {
		t.Errorf("the rejected command ran")
	}
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

// nextState waits for the session's next state notification, whichever.
func nextState(c *client, sessionID string, from *int, timeout time.Duration) stateNote {
	c.t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		notes := c.notes
		c.mu.Unlock()
		for i := *from; i < len(notes); i++ {
			var s stateNote
			if notes[i].Method == "session/state" && json.Unmarshal(notes[i].Params, &s) == nil && s.SessionID == sessionID {
				*from = i + 1
				return s
			}
		}
		select {
		case <-c.notify:
		case <-deadline:
			c.t.Fatalf("no state for %s within %s; states seen: %s\nscreen:\n%s", sessionID, timeout, c.states(sessionID), c.screen(sessionID))
		}
	}
}

// optionByLabel is the id of the option labelled label in a blocked state.
func optionByLabel(t *testing.T, n stateNote, label string) string {
	t.Helper()
	for _, o := range n.Prompt.Options {
		if o.Label == label {
			return o.ID
		}
	}
	t.Fatalf("no option %q in %+v", label, n.Prompt)
	return ""
}

// The real Grok CLI 0.0.34, offline, hosted by the real agentd. Its menu
// marks the selection only by colour, so the keys agentd types are arrows
// counted from the option drawn on cyan: "Yes" (Enter) runs the command;
// "No" (down, down, Enter) does not.
func TestGrokEndToEnd(t *testing.T) {
	bin := requireAgent(t, "grok")
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Prompt: "make the file", Reply: fakemodel.Reply{Tool: lab.GrokBash("touch made.txt")}, AfterTool: fakemodel.Reply{Text: "Created made.txt."}},
		{Prompt: "make another", Reply: fakemodel.Reply{Tool: lab.GrokBash("touch other.txt")}, AfterTool: fakemodel.Reply{Text: "Understood."}},
	}}
	l, _, err := lab.Grok(bin, d, script)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": interactiveEnv(l.Env), "cols": 120, "rows": 40}, &s)
	if s.Agent != "grok" {
		t.Fatalf("identified as %q, want grok", s.Agent)
	}
	from := 0
	c.waitState(s.SessionID, "idle", &from, 60*time.Second)
	options := []string{"Yes", "Yes, and don't ask again this session", "No", "No, with feedback"}
	// Grok draws no completion line, but its last block is the model's
	// reply ("⏺ text", no "⎿" result under it). After "No" the model is
	// told and replies, so that turn completes too.
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send: "please make the file", question: "Do you want to proceed with this operation?", options: options,
		answer: "Yes", file: "made.txt", made: true, outcome: "completed",
	})
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send: "now make another", question: "Do you want to proceed with this operation?", options: options,
		answer: "No", file: "other.txt", made: false, outcome: "completed",
	})
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

// The real Droid 0.225.2, offline with a bring-your-own model and a
// stand-in for Factory's account service, hosted by the real agentd: the
// folder trust page answered from the editor → idle → a command approved
// ("Yes, allow", chosen by the bold the arrows move) runs → done,
// completed → a second one refused with "No, cancel" does not run → done,
// interrupted.
func TestDroidEndToEnd(t *testing.T) {
	bin := lab.DroidBin()
	if _, err := os.Stat(bin); err != nil {
		requireAgent(t, "droid") // skips or fails with the install hint
	}
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		lab.DroidRule("make the file", fakemodel.Reply{Tool: lab.DroidExecute("sleep 1 && touch made.txt", "Create the made file")}, "Created made.txt."),
		lab.DroidRule("make another", fakemodel.Reply{Tool: lab.DroidExecute("touch other.txt", "Create the other file")}, "Created other.txt."),
	}}
	l, srv, err := lab.Droid(bin, d, script)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	defer func() {
		if t.Failed() {
			for i, r := range srv.Requests() {
				t.Logf("model request %d: %s last=%.60q toolResult=%v", i, r.Path, r.LastUser, r.ToolResult)
			}
		}
	}()
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": interactiveEnv(l.Env), "cols": 120, "rows": 40}, &s)
	if s.Agent != "droid" {
		t.Fatalf("identified as %q, want droid", s.Agent)
	}
	from := 0
	trust := c.waitPrompt(s.SessionID, &from, 90*time.Second)
	if trust.Prompt.Kind != "trust" || trust.Prompt.Question != "Trust this folder?" {
		t.Fatalf("first prompt = %+v, want the folder trust page", trust.Prompt)
	}
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": trust.Prompt.PromptID, "optionId": optionByLabel(t, trust, "Trust this folder")}, nil)
	waitIdleNoDone(t, c, s.SessionID, &from)
	options := []string{"Yes, allow", "Yes, and always allow medium impact commands (all commands that are reversible)", "No, cancel"}
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send: "please make the file", question: "Command to approve", options: options,
		answer: "Yes, allow", file: "made.txt", made: true, outcome: "completed",
	})
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send: "now make another", question: "Command to approve", options: options,
		answer: "No, cancel", file: "other.txt", made: false, outcome: "interrupted",
	})
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

// The real Auggie 0.36.0, offline against a fake Augment tenant, hosted by
// the real agentd: its four first-run pages and the indexing question
// answered from the editor → idle → a command allowed ("[A]llow", typed
// as its letter) runs → done → a second one denied ("[D]eny") does not
// run; the model is told and replies → done.
func TestAuggieEndToEnd(t *testing.T) {
	bin := requireAgent(t, "auggie")
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		lab.AuggieRule("make the file", lab.AuggieLaunch("sleep 1 && touch made.txt"), "Created made.txt."),
		lab.AuggieRule("make another", lab.AuggieLaunch("touch other.txt"), "Created other.txt."),
	}}
	l, srv, err := lab.Auggie(bin, d, script)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	defer func() {
		if t.Failed() {
			for i, r := range srv.Requests() {
				t.Logf("model request %d: %s last=%.60q toolResult=%v", i, r.Path, r.LastUser, r.ToolResult)
			}
		}
	}()
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": interactiveEnv(l.Env), "cols": 120, "rows": 40}, &s)
	if s.Agent != "auggie" {
		t.Fatalf("identified as %q, want auggie", s.Agent)
	}
	from := 0
	// Each page is its own prompt (the tips carry their page number).
	pages := []string{
		"Welcome to Augment Code! A bit of housekeeping before we get started",
		"Tips for using Auggie 1 of 3", "Tips for using Auggie 2 of 3", "Tips for using Auggie 3 of 3",
	}
	for _, page := range pages {
		p := c.waitPrompt(s.SessionID, &from, 90*time.Second)
		if p.Prompt.Kind != "confirm" || p.Prompt.Question != page {
			t.Fatalf("prompt %+v, want the page %q; screen:\n%s", p.Prompt, page, c.screen(s.SessionID))
		}
		c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": p.Prompt.PromptID, "optionId": optionByLabel(t, p, "Continue")}, nil)
	}
	idx := c.waitPrompt(s.SessionID, &from, 30*time.Second)
	if idx.Prompt.Question != "Workspace Indexing Permission" {
		t.Fatalf("prompt %+v, want the indexing question", idx.Prompt)
	}
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": idx.Prompt.PromptID, "optionId": optionByLabel(t, idx, "Skip indexing for this session")}, nil)
	waitIdleNoDone(t, c, s.SessionID, &from)
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send: "please make the file", question: "Terminal: sleep 1 && touch made.txt", options: []string{"Allow", "Deny"},
		answer: "Allow", file: "made.txt", made: true, outcome: "completed",
	})
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send: "now make another", question: "Terminal: touch other.txt", options: []string{"Allow", "Deny"},
		answer: "Deny", file: "other.txt", made: false, outcome: "completed",
	})
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

// A manifest alone adds an agent: $XDG_CONFIG_HOME/agentd/rules/deployer.toml
// for a program agentd has never heard of (a bash script named deployer,
// not an agent CLI) makes it identified from the process alone, classified
// (idle, working, blocked with its options) and answerable, with no
// release. The answer really reaches the program.
func TestAUserManifestAddsAnAgent(t *testing.T) {
	cfg := t.TempDir()
	rules := filepath.Join(cfg, "agentd", "rules")
	if err := os.MkdirAll(rules, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `name = "deployer"
display = "Deployer"
[identify]
process = ["deployer"]
[[region]]
name = "last"
bottom = 1
[[rule]]
id = "confirm"
state = "blocked"
region = "last"
match = ['^Ship build \d+ to production\? \[y/N\]\s*$']
prompt = "confirm"
[[rule]]
id = "working"
state = "working"
region = "last"
match = ['^Building\.\.\.$']
[[rule]]
id = "ready"
state = "idle"
region = "last"
match = ['^deployer>\s*$']
[prompt.confirm]
kind = "confirm"
question = '^(Ship build \d+ to production\?)'
option = '(?P<key>(?P<label>[yN]))[/\]]'
keys = "{key}<enter>"
reject = '^N$'
`
	if err := os.WriteFile(filepath.Join(rules, "deployer.toml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	prog := filepath.Join(t.TempDir(), "deployer")
	script := "#!/bin/bash\n" +
		"while true; do\n" +
		"  printf 'deployer> '; read -r cmd || exit 0\n" +
		"  [ \"$cmd\" = ship ] || continue\n" +
		"  echo 'Building...'; sleep 1\n" +
		"  printf 'Ship build 42 to production? [y/N] '; read -r a\n" +
		"  [ \"$a\" = y ] && touch shipped.txt && echo Shipped.\n" +
		"done\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", cfg)
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{prog}, "cwd": work}, &s)
	if s.Agent != "deployer" {
		t.Fatalf("identified as %q, want deployer (from the user's manifest)", s.Agent)
	}
	from := 0
	c.waitState(s.SessionID, "idle", &from, 20*time.Second)
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "ship", "submit": true}, nil)
	c.waitState(s.SessionID, "working", &from, 20*time.Second)
	b := c.waitPrompt(s.SessionID, &from, 20*time.Second)
	var labels []string
	for _, o := range b.Prompt.Options {
		labels = append(labels, o.Label)
	}
	if b.Prompt.Question != "Ship build 42 to production?" || strings.Join(labels, ",") != "y,N" || b.Reason != "deployer.confirm" {
		t.Fatalf("blocked %s: question %q options %q", b.Reason, b.Prompt.Question, labels)
	}
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": optionByLabel(t, b, "y")}, nil)
	c.waitState(s.SessionID, "done", &from, 20*time.Second)
	if _, err := os.Stat(filepath.Join(work, "shipped.txt")); err != nil {
		t.Errorf("the answer did not reach the program: %v", err)
	}
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

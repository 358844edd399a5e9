package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/fixtures/fakemodel"
	"github.com/agentd/agentd/fixtures/lab"
)

// The real Cline 3.0.65, offline, hosted by the real agentd: a command
// approved ("Approve", its letter y) runs → done, completed (the model's
// reply is the last block) → a second one denied ("Deny", n) does not
// run; the model is told and replies → done, completed. Cline's hub
// daemon, which outlives its TUI, is ended by the launch's Cleanup.
func TestClineEndToEnd(t *testing.T) {
	bin := requireAgent(t, "cline")
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Prompt: "make the file", Reply: fakemodel.Reply{Tool: lab.ClineCommand("touch made.txt")}, AfterTool: fakemodel.Reply{Text: "Created made.txt."}},
		{Prompt: "make another", Reply: fakemodel.Reply{Tool: lab.ClineCommand("touch other.txt")}, AfterTool: fakemodel.Reply{Text: "Understood."}},
	}}
	l, _, err := lab.Cline(bin, d, script, lab.ClineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": interactiveEnv(l.Env), "cols": 120, "rows": 40}, &s)
	if s.Agent != "cline" {
		t.Fatalf("identified as %q, want cline", s.Agent)
	}
	defer func() {
		if t.Failed() {
			t.Logf("screen at the end:\n%s", c.screen(s.SessionID))
		}
	}()
	from := 0
	c.waitState(s.SessionID, "idle", &from, 60*time.Second)
	options := []string{"Approve", "Deny"}
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send: "please make the file", question: "Approve tool call?", options: options,
		answer: "Approve", file: "made.txt", made: true, outcome: "completed",
	})
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send: "now make another", question: "Approve tool call?", options: options,
		answer: "Deny", file: "other.txt", made: false, outcome: "completed",
	})
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

// The real Continue CLI 1.5.47, offline, hosted by the real agentd with
// auto-update and telemetry off: a command allowed ("Continue", its key
// Tab) runs → done, completed → a second one refused ("No, and tell
// Continue what to do differently", Esc) does not run → done,
// interrupted ("[Tool canceled …]").
func TestContinueEndToEnd(t *testing.T) {
	bin := requireAgent(t, "cn")
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Prompt: "make the file", Reply: fakemodel.Reply{Tool: lab.ContinueBash("touch made.txt")}, AfterTool: fakemodel.Reply{Text: "Created made.txt."}},
		{Prompt: "make another", Reply: fakemodel.Reply{Tool: lab.ContinueBash("touch other.txt")}, AfterTool: fakemodel.Reply{Text: "Understood."}},
	}}
	l, _, err := lab.Continue(bin, d, script)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": interactiveEnv(l.Env), "cols": 120, "rows": 40}, &s)
	if s.Agent != "continue" {
		t.Fatalf("identified as %q, want continue", s.Agent)
	}
	defer func() {
		if t.Failed() {
			t.Logf("screen at the end:\n%s", c.screen(s.SessionID))
		}
	}()
	from := 0
	c.waitState(s.SessionID, "idle", &from, 60*time.Second)
	options := []string{"Continue", "Continue + don't ask again", "No, and tell Continue what to do differently"}
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send: "please make the file", question: "Would you like to continue?", options: options,
		answer: "Continue", file: "made.txt", made: true, outcome: "completed",
	})
	playScreenTurn(t, c, s.SessionID, &from, d.Work, screenTurn{
		send: "now make another", question: "Would you like to continue?", options: options,
		answer: "No, and tell Continue what to do differently", file: "other.txt", made: false, outcome: "interrupted",
	})
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

// The real Letta Code 0.32.18 on its local backend, offline, hosted by the
// real agentd: a command allowed ("Yes", its digit) runs → done, completed
// (the model's reply is the last block) → a second one refused ("No, and
// tell Letta Code what to do differently", then its reason prompt's
// "cancel") does not run → done, interrupted.
func TestLettaEndToEnd(t *testing.T) {
	bin := requireAgent(t, "letta")
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{
		{Prompt: "make the file", Reply: fakemodel.Reply{Tool: lab.LettaBash("touch made.txt", "Create the made file")}, AfterTool: fakemodel.Reply{Text: "Created made.txt."}},
		{Prompt: "make another", Reply: fakemodel.Reply{Tool: lab.LettaBash("touch other.txt", "Create the other file")}, AfterTool: fakemodel.Reply{Text: "Understood."}},
	}}
	l, _, err := lab.Letta(bin, d, script)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": interactiveEnv(l.Env), "cols": 120, "rows": 40}, &s)
	if s.Agent != "letta" {
		t.Fatalf("identified as %q, want letta", s.Agent)
	}
	defer func() {
		if t.Failed() {
			t.Logf("screen at the end:\n%s", c.screen(s.SessionID))
		}
	}()
	from := 0
	c.waitState(s.SessionID, "idle", &from, 90*time.Second)
	// Letta draws its prompt's second option first as "Yes, and don't ask
	// again for this project", then names the command in it: an answer to
	// the first drawing is stale (agentd refuses it), so the test answers
	// the prompt once it names the command.
	settled := func(b stateNote, cmd string) bool {
		return b.State == "blocked" && b.Prompt != nil && len(b.Prompt.Options) == 3 &&
			strings.HasPrefix(b.Prompt.Options[1].Label, "Yes, and don't ask again for '"+strings.Fields(cmd)[0])
	}
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "please make the file", "submit": true}, nil)
	b := c.waitPrompt(s.SessionID, &from, 60*time.Second)
	for !settled(b, "touch made.txt") {
		b = nextState(c, s.SessionID, &from, 30*time.Second)
	}
	if b.Prompt.Question != "Run this command?" || b.Prompt.Kind != "permission" {
		t.Fatalf("prompt %+v, want the permission to run touch made.txt", b.Prompt)
	}
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": optionByLabel(t, b, "Yes")}, nil)
	deadline := time.Now().Add(60 * time.Second)
	for done := c.waitState(s.SessionID, "done", &from, 60*time.Second); done.Outcome != "completed"; done = c.waitState(s.SessionID, "done", &from, time.Until(deadline)) {
		if time.Now().After(deadline) {
			t.Fatalf("no done with outcome completed; states %s", strings.Join(c.states(s.SessionID), " → "))
		}
	}
	if _, err := os.Stat(filepath.Join(d.Work, "made.txt")); err != nil {
		t.Errorf("made.txt after the command was allowed: %v", err)
	}
	c.mustCall("session/seen", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "idle", &from, 10*time.Second)
	// "No, and tell Letta Code what to do differently" asks for a reason
	// on its row: a second prompt, whose "cancel" (Esc) ends the approval
	// without one.
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "now make another", "submit": true}, nil)
	b = c.waitPrompt(s.SessionID, &from, 60*time.Second)
	for !settled(b, "touch other.txt") {
		b = nextState(c, s.SessionID, &from, 30*time.Second)
	}
	refuse := "No, and tell Letta Code what to do differently"
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": optionByLabel(t, b, refuse)}, nil)
	r := c.waitPrompt(s.SessionID, &from, 30*time.Second)
	for r.Prompt.PromptID == b.Prompt.PromptID {
		r = c.waitPrompt(s.SessionID, &from, 30*time.Second)
	}
	if len(r.Prompt.Options) != 1 || r.Prompt.Options[0].Label != "cancel" || r.Prompt.Question != "Run this command?" {
		t.Fatalf("after %q: prompt %+v, want the reason's with one option, cancel; screen:\n%s", refuse, r.Prompt, c.screen(s.SessionID))
	}
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": r.Prompt.PromptID, "optionId": r.Prompt.Options[0].ID}, nil)
	deadline = time.Now().Add(60 * time.Second)
	for done := c.waitState(s.SessionID, "done", &from, 60*time.Second); done.Outcome != "interrupted"; done = c.waitState(s.SessionID, "done", &from, time.Until(deadline)) {
		if time.Now().After(deadline) {
			t.Fatalf("no done with outcome interrupted; states %s", strings.Join(c.states(s.SessionID), " → "))
		}
	}
	if _, err := os.Stat(filepath.Join(d.Work, "other.txt")); err == nil {
		t.Errorf("other.txt exists after the command was refused")
	}
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

// The real Cline over ACP (cline --acp), with its openai-compatible
// provider set up as for the screen tests and named on the command line:
// Cline still wants an ACP authenticate with one of its own methods
// (cline, cline-pass, openai-codex), all of which need its account
// service. agentd refuses the spawn with the login error and those
// methods, as for any ACP agent that asks to log in; past that, nothing
// runs offline.
func TestClineACPNeedsLogin(t *testing.T) {
	bin := requireAgent(t, "cline")
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := lab.Cline(bin, d, &fakemodel.Script{}, lab.ClineOptions{}, "--acp", "-P", "openai-compatible", "-m", "fake-model")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	c := startAgentd(t)
	err = c.call("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": envMap(l.Env, "CI"), "protocol": "acp", "agent": "cline-acp"}, nil)
	if rpcCode(err) != -32014 || !strings.Contains(err.Error(), `"cline"`) || !strings.Contains(err.Error(), `"cline-pass"`) {
		t.Fatalf("session/spawn of cline --acp: %v; want the login error (-32014) naming Cline's auth methods", err)
	}
	t.Logf("spawn refused as expected: %v", err)
}

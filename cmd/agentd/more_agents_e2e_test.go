package main

import (
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

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/fixtures/fakemodel"
	"github.com/agentd/agentd/fixtures/lab"
)

// TestAgents runs each real agent CLI, offline against the fake model
// server, through the real agentd: spawned and identified, ready, any
// first-run pages answered from the editor, then its turns. A turn is a
// task sent with runtime_send → working → blocked with the prompt the
// recordings have → runtime_send refused while blocked → runtime_answer by
// the option's label → the prompt gone from the state stream → done with
// the turn's outcome → the command's file there (approved) or not
// (refused) → seen → idle. At the end the session is killed → exited, and
// no process is left with the agent's HOME (labDirs).
//
// One row per agent; a row is a subtest named after the agent, so
//
//	AGENTD_REQUIRE_AGENTS=1 go test -count=1 -run 'TestAgents/^claude$' ./cmd/agentd
//
// runs one. A new agent joins with a row: its lab setup (launch), a
// fake-model script with a rule per turn, the prompt's question and option
// labels as agentd reports them, the label that approves and the one that
// refuses, and the outcome each turn ends with. What an agent does
// differently is a field of the row or its turn (first-run pages, a prompt
// that settles a frame late, a second prompt after a refusal), not a copy
// of the flow.
func TestAgents(t *testing.T) {
	for _, row := range agentRows() {
		t.Run(row.name, func(t *testing.T) { row.run(t) })
	}
}

// agentRow is one agent's end-to-end run.
type agentRow struct {
	name string // the subtest's name and the agent agentd must identify
	// bin finds the installed CLI (skipping, or failing under
	// AGENTD_REQUIRE_AGENTS=1, without it).
	bin    func(t *testing.T) string
	launch func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error)
	unset  []string // variables of agentd's environment the agent must not get
	script *fakemodel.Script
	ready  time.Duration // how long the agent may take to start (its first idle or prompt)
	// firstRun are the prompts a fresh start asks before the composer,
	// answered in order; then the session is idle with no done on the way.
	firstRun []pageAnswer
	turns    []agentTurn
	// neverBlocked: the agent never asks, so no state is blocked.
	neverBlocked bool
	// after checks the end of the run, before the kill.
	after func(t *testing.T, c *stdioClient, id, work string)
}

// pageAnswer is one prompt answered by label: its kind when given, its
// question, the label to answer.
type pageAnswer struct{ kind, question, answer string }

// agentTurn is one task and the permission prompt it brings.
type agentTurn struct {
	send string // the task typed
	// working: the turn is seen working before its prompt.
	working bool
	// question, kind and options are the prompt as agentd reports it
	// (kind only when given). An option ending in "*" matches the labels
	// that begin with the rest (a label naming the temp folder). With no
	// question the agent does not ask and the turn ends in done.
	question, kind string
	options        []string
	// settles: drawings of the prompt before it matches question and
	// options are passed over (a label completed a frame late).
	settles   bool
	attention bool   // the blocked state raises attention
	answer    string // the label answered
	// workingAfter: working follows the answer.
	workingAfter bool
	// then is the prompt the answer brings, answered in turn.
	then *followUp
	file string // the work-folder file the command makes
	made bool   // whether the answer lets it be made
	// outcome is the done outcome that ends the turn; "": any.
	outcome string
	// firstDone: the turn's first done already has its outcome (the
	// agent reports it). Without it a screen-read turn may end in done
	// with outcome unknown for a frame before the outcome is drawn.
	firstDone bool
	// idleEnds: the turn may end idle with no done.
	idleEnds bool
}

// followUp is a prompt an answer brings: its question, its option labels
// when given, the label to answer; maybe: it may not come at all.
type followUp struct {
	question string
	options  []string
	answer   string
	maybe    bool
}

// installed is an agent CLI in the agents cache (lab.Require).
func installed(name string) func(t *testing.T) string {
	return func(t *testing.T) string { t.Helper(); return requireAgent(t, name) }
}

// installedAt is an agent installed at a path of its own (a binary the
// npm package fetches), with requireAgent's skip or failure without it.
func installedAt(path func() string, name string) func(t *testing.T) string {
	return func(t *testing.T) string {
		t.Helper()
		bin := path()
		if _, err := os.Stat(bin); err != nil {
			requireAgent(t, name)
		}
		return bin
	}
}

// launchArgs adapts a lab setup that takes extra arguments.
func launchArgs(f func(bin string, d lab.Dirs, s *fakemodel.Script, args ...string) (*lab.Launch, *fakemodel.Server, error)) func(string, lab.Dirs, *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
	return func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
		return f(bin, d, s)
	}
}

// twoFiles is the script most rows play: "make the file" asks to run the
// tool that creates made.txt, "make another" the one for other.txt.
func twoFiles(made, other *fakemodel.ToolCall, afterOther string) *fakemodel.Script {
	return &fakemodel.Script{Rules: []fakemodel.Rule{
		{Prompt: "make the file", Reply: fakemodel.Reply{Tool: made}, AfterTool: fakemodel.Reply{Text: "Created made.txt."}},
		{Prompt: "make another", Reply: fakemodel.Reply{Tool: other}, AfterTool: fakemodel.Reply{Text: afterOther}},
	}}
}

// approve and refuse are the two turns most rows play.
func approve(question string, options []string, answer, outcome string) agentTurn {
	return agentTurn{send: "please make the file", question: question, kind: "permission", options: options, answer: answer, file: "made.txt", made: true, outcome: outcome}
}

func refuse(question string, options []string, answer, outcome string) agentTurn {
	return agentTurn{send: "now make another", question: question, kind: "permission", options: options, answer: answer, file: "other.txt", outcome: outcome}
}

func agentRows() []agentRow {
	return []agentRow{
		{
			// Claude Code 2.1.332. Hooks and OSC 7501 report its states.
			name: "claude", bin: installed("claude"), unset: lab.ClaudeUnset, ready: 60 * time.Second,
			launch: func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
				return lab.Claude(bin, d, s, lab.ClaudeOptions{})
			},
			script: &fakemodel.Script{Rules: []fakemodel.Rule{{
				Prompt:    "make a file",
				Reply:     fakemodel.Reply{Text: "I'll create it.", Tool: lab.ClaudeBash("sleep 1 && touch made.txt", "Create made.txt")},
				AfterTool: fakemodel.Reply{Text: "Created made.txt."},
			}, {
				Prompt:    "make another",
				Reply:     fakemodel.Reply{Tool: lab.ClaudeBash("touch other.txt", "Create other.txt")},
				AfterTool: fakemodel.Reply{Text: "Understood."},
			}}},
			turns: []agentTurn{{
				send: "please make a file", working: true,
				question: "Do you want to proceed?", kind: "permission",
				options:   []string{"Yes", "Yes, and always allow access to *", "Yes, and switch to auto mode", "No"},
				attention: true, answer: "Yes", workingAfter: true,
				file: "made.txt", made: true, outcome: "completed", firstDone: true,
			}, {
				send: "now make another", working: true,
				question: "Do you want to proceed?", kind: "permission",
				options: []string{"Yes", "Yes, and always allow access to *", "Yes, and switch to auto mode", "No"},
				answer:  "No",
				file:    "other.txt", outcome: "interrupted",
			}},
		},
		{
			// Codex 0.171.0. It reports blocked (OSC 7501, no question)
			// before it draws the prompt; agentd waits the 250 ms Codex
			// needs before it takes keys, then types the option's letter.
			name: "codex", bin: installed("codex"), ready: 60 * time.Second,
			launch: func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
				return lab.Codex(bin, d, s, lab.CodexOptions{})
			},
			script: &fakemodel.Script{Rules: []fakemodel.Rule{{
				Prompt:    "notes file",
				Reply:     fakemodel.Reply{Tool: lab.CodexExec("touch notes.txt", "Create the notes file you asked for")},
				AfterTool: fakemodel.Reply{Text: "Created notes.txt."},
			}, {
				Prompt:    "other file",
				Reply:     fakemodel.Reply{Tool: lab.CodexExec("touch other.txt", "Create the other file")},
				AfterTool: fakemodel.Reply{Text: "Understood."},
			}}},
			turns: []agentTurn{{
				send: "make a notes file", working: true,
				question: "Would you like to run the following command?", kind: "permission",
				options: []string{"Yes, proceed", "Yes, and don't ask again for commands that start with `touch notes.txt`", "No, and tell Codex what to do differently"},
				answer:  "Yes, proceed",
				file:    "notes.txt", made: true, outcome: "completed", firstDone: true,
			}, {
				send: "now make the other file", working: true,
				question: "Would you like to run the following command?", kind: "permission",
				options: []string{"Yes, proceed", "Yes, and don't ask again for commands that start with `touch other.txt`", "No, and tell Codex what to do differently"},
				answer:  "No, and tell Codex what to do differently",
				file:    "other.txt", outcome: "interrupted",
			}},
		},
		{
			// Cline 3.0.65: "Approve" is its letter y, "Deny" n. A denied
			// tool goes back to the model, whose reply completes the turn.
			// Its hub daemon, which outlives the TUI, is ended by the
			// launch's Cleanup.
			name: "cline", bin: installed("cline"), unset: noCI, ready: 60 * time.Second,
			launch: func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
				return lab.Cline(bin, d, s, lab.ClineOptions{})
			},
			script: twoFiles(lab.ClineCommand("touch made.txt"), lab.ClineCommand("touch other.txt"), "Understood."),
			turns: []agentTurn{
				approve("Approve tool call?", []string{"Approve", "Deny"}, "Approve", "completed"),
				refuse("Approve tool call?", []string{"Approve", "Deny"}, "Deny", "completed"),
			},
		},
		{
			// Continue CLI 1.5.47 with auto-update and telemetry off:
			// "Continue" is Tab; the refusal is Esc ("[Tool canceled …]").
			name: "continue", bin: installed("cn"), unset: noCI, ready: 60 * time.Second,
			launch: launchArgs(lab.Continue),
			script: twoFiles(lab.ContinueBash("touch made.txt"), lab.ContinueBash("touch other.txt"), "Understood."),
			turns: func() []agentTurn {
				q, o := "Would you like to continue?", []string{"Continue", "Continue + don't ask again", "No, and tell Continue what to do differently"}
				return []agentTurn{approve(q, o, "Continue", "completed"), refuse(q, o, "No, and tell Continue what to do differently", "interrupted")}
			}(),
		},
		{
			// Copilot CLI 1.0.102 with its own model: the folder trust
			// dialog first; option 3's key is Esc.
			name: "copilot", bin: installed("copilot"), unset: noCI, ready: 90 * time.Second,
			launch:   launchArgs(lab.Copilot),
			script:   twoFiles(lab.CopilotBash("sleep 1 && touch made.txt", "Create made.txt"), lab.CopilotBash("touch other.txt", "Create other.txt"), "Created other.txt."),
			firstRun: []pageAnswer{{kind: "trust", question: "Do you trust the files in this folder?", answer: "Yes"}},
			turns: []agentTurn{
				approve("Do you want to run this command?",
					[]string{"Yes", "Yes, and don't ask again for `sleep` and `touch` in this directory", "No, and tell Copilot what to do differently"},
					"Yes", "completed"),
				refuse("Do you want to run this command?",
					[]string{"Yes", "Yes, and don't ask again for `touch` in this directory", "No, and tell Copilot what to do differently"},
					"No, and tell Copilot what to do differently", "interrupted"),
			},
		},
		{
			// Qwen Code 0.24.4, asking first: the refusal is Esc and the
			// tool row says so.
			name: "qwen", bin: installed("qwen"), unset: noCI, ready: 90 * time.Second,
			launch: launchArgs(lab.Qwen),
			script: twoFiles(lab.QwenShell("touch made.txt", "Create made.txt"), lab.QwenShell("touch other.txt", "Create other.txt"), "Created other.txt."),
			turns: func() []agentTurn {
				q, o := "Allow execution of: 'touch'?", []string{"Yes, allow once", "Always allow run 'touch *' commands in this project", "Always allow run 'touch *' commands for this user", "No, suggest changes"}
				return []agentTurn{approve(q, o, "Yes, allow once", "completed"), refuse(q, o, "No, suggest changes", "interrupted")}
			}(),
		},
		{
			// Pi 0.73.1 never asks: the command runs during the turn, and a
			// reply that ends in a y/n question is prose.
			name: "pi", bin: installed("pi"), unset: noCI, ready: 60 * time.Second,
			launch: launchArgs(lab.Pi),
			script: &fakemodel.Script{Rules: []fakemodel.Rule{
				{Prompt: "make the file", Reply: fakemodel.Reply{Tool: lab.PiBash("sleep 2 && touch made.txt")}, AfterTool: fakemodel.Reply{Text: "Created made.txt."}},
				// A second before the first token, as a real model takes:
				// answered at once, Pi can draw the whole turn between two
				// of agentd's looks, and a turn never seen working reads
				// idle, not done (CI saw that once).
				{Prompt: "what next", Reply: fakemodel.Reply{Text: "I can also delete the file.\nShall I continue? (y/n)", FirstByte: time.Second}},
			}},
			neverBlocked: true,
			turns: []agentTurn{
				{send: "please make the file", working: true, file: "made.txt", made: true},
				{send: "what next?", working: true},
			},
			after: func(t *testing.T, c *stdioClient, id, _ string) {
				if !strings.Contains(c.screen(id), "Shall I continue? (y/n)") {
					t.Errorf("the y/n reply is not on screen:\n%s", c.screen(id))
				}
			},
		},
		{
			// Kilo 7.7.9, an OpenCode fork, identified as Kilo. After
			// "Reject" it may ask what to do instead; confirming with no
			// text rejects.
			name: "kilo", bin: installedAt(lab.KiloBin, "kilo"), unset: noCI, ready: 90 * time.Second,
			launch: launchArgs(lab.Kilo),
			script: twoFiles(lab.OpenCodeBash("touch made.txt", "Create made.txt"), lab.OpenCodeBash("touch other.txt", "Create other.txt"), "Created other.txt."),
			turns: []agentTurn{
				approve("Create made.txt", []string{"Allow once", "Allow always", "Reject"}, "Allow once", "completed"),
				func() agentTurn {
					r := refuse("Create other.txt", []string{"Allow once", "Allow always", "Reject"}, "Reject", "")
					r.then, r.idleEnds = &followUp{question: "Tell Kilo what to do differently", answer: "confirm", maybe: true}, true
					return r
				}(),
			},
		},
		{
			// Grok CLI 0.0.34 marks the selection only by colour: agentd
			// types arrows counted from the option drawn on cyan. It draws
			// no completion line, but its last block is the model's reply;
			// after "No" the model is told and replies, so that turn
			// completes too.
			name: "grok", bin: installed("grok"), unset: noCI, ready: 60 * time.Second,
			launch: launchArgs(lab.Grok),
			script: twoFiles(lab.GrokBash("touch made.txt"), lab.GrokBash("touch other.txt"), "Understood."),
			turns: func() []agentTurn {
				q, o := "Do you want to proceed with this operation?", []string{"Yes", "Yes, and don't ask again this session", "No", "No, with feedback"}
				return []agentTurn{approve(q, o, "Yes", "completed"), refuse(q, o, "No", "completed")}
			}(),
		},
		{
			// Droid 0.225.2 with a bring-your-own model and a stand-in for
			// Factory's account service: the folder trust page first; the
			// option is chosen by the bold the arrows move.
			name: "droid", bin: installedAt(lab.DroidBin, "droid"), unset: noCI, ready: 90 * time.Second,
			launch: launchArgs(lab.Droid),
			script: &fakemodel.Script{Rules: []fakemodel.Rule{
				lab.DroidRule("make the file", fakemodel.Reply{Tool: lab.DroidExecute("sleep 1 && touch made.txt", "Create the made file")}, "Created made.txt."),
				lab.DroidRule("make another", fakemodel.Reply{Tool: lab.DroidExecute("touch other.txt", "Create the other file")}, "Created other.txt."),
			}},
			firstRun: []pageAnswer{{kind: "trust", question: "Trust this folder?", answer: "Trust this folder"}},
			turns: func() []agentTurn {
				q, o := "Command to approve", []string{"Yes, allow", "Yes, and always allow medium impact commands (all commands that are reversible)", "No, cancel"}
				return []agentTurn{approve(q, o, "Yes, allow", "completed"), refuse(q, o, "No, cancel", "interrupted")}
			}(),
		},
		{
			// Auggie 0.36.0 against a fake Augment tenant: four first-run
			// pages (the tips carry their page number) and the indexing
			// question; "[A]llow" and "[D]eny" are typed as their letters,
			// and a denied command goes back to the model, whose reply
			// completes the turn.
			name: "auggie", bin: installed("auggie"), unset: noCI, ready: 90 * time.Second,
			launch: launchArgs(lab.Auggie),
			script: &fakemodel.Script{Rules: []fakemodel.Rule{
				lab.AuggieRule("make the file", lab.AuggieLaunch("sleep 1 && touch made.txt"), "Created made.txt."),
				lab.AuggieRule("make another", lab.AuggieLaunch("touch other.txt"), "Created other.txt."),
			}},
			firstRun: []pageAnswer{
				{kind: "confirm", question: "Welcome to Augment Code! A bit of housekeeping before we get started", answer: "Continue"},
				{kind: "confirm", question: "Tips for using Auggie 1 of 3", answer: "Continue"},
				{kind: "confirm", question: "Tips for using Auggie 2 of 3", answer: "Continue"},
				{kind: "confirm", question: "Tips for using Auggie 3 of 3", answer: "Continue"},
				{question: "Workspace Indexing Permission", answer: "Skip indexing for this session"},
			},
			turns: []agentTurn{
				approve("Tool Approval Required", []string{"Allow", "Deny"}, "Allow", "completed"),
				refuse("Tool Approval Required", []string{"Allow", "Deny"}, "Deny", "completed"),
			},
		},
		{
			// Letta Code 0.32.18 on its local backend. It draws its
			// prompt's second option first as "Yes, and don't ask again
			// for this project", then names the command in it: an answer to
			// the first drawing is stale (agentd refuses it), so the turn
			// waits for the prompt to settle. Its refusal asks for a reason
			// on its row, a second prompt whose "cancel" (Esc) ends the
			// approval without one.
			name: "letta", bin: installed("letta"), unset: noCI, ready: 90 * time.Second,
			launch: launchArgs(lab.Letta),
			script: twoFiles(lab.LettaBash("touch made.txt", "Create the made file"), lab.LettaBash("touch other.txt", "Create the other file"), "Understood."),
			turns: func() []agentTurn {
				q, no := "Run this command?", "No, and tell Letta Code what to do differently"
				a := approve(q, []string{"Yes", "Yes, and don't ask again for 'touch made.txt' in this project", no}, "Yes", "completed")
				r := refuse(q, []string{"Yes", "Yes, and don't ask again for 'touch other.txt' in this project", no}, no, "interrupted")
				a.settles, r.settles = true, true
				r.then = &followUp{question: q, options: []string{"cancel"}, answer: "cancel"}
				return []agentTurn{a, r}
			}(),
		},
	}
}

func (row agentRow) run(t *testing.T) {
	bin := row.bin(t)
	d := labDirs(t)
	l, srv, err := row.launch(bin, d, row.script)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	defer func() {
		if t.Failed() && srv != nil {
			for i, r := range srv.Requests() {
				t.Logf("model request %d: %s last=%.60q toolResult=%v", i, r.Path, r.LastUser, r.ToolResult)
			}
		}
	}()
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": envMap(l.Env, row.unset...), "cols": 120, "rows": 40}, &s)
	if s.Agent != row.name {
		t.Fatalf("identified as %q, want %s", s.Agent, row.name)
	}
	id := s.SessionID
	defer func() {
		if t.Failed() {
			t.Logf("screen at the end:\n%s", c.screen(id))
		}
	}()
	from := 0
	if len(row.firstRun) == 0 {
		c.waitState(id, "idle", &from, row.ready)
	} else {
		for i, page := range row.firstRun {
			p := c.waitPrompt(id, &from, row.ready)
			if p.Prompt.Question != page.question || page.kind != "" && p.Prompt.Kind != page.kind {
				t.Fatalf("first-run prompt %d = %+v, want %s %q; screen:\n%s", i+1, p.Prompt, page.kind, page.question, c.screen(id))
			}
			c.mustCall("runtime_answer", map[string]any{"sessionId": id, "promptId": p.Prompt.PromptID, "optionId": optionByLabel(t, p, page.answer)}, nil)
		}
		waitIdleNoDone(t, c, id, &from)
	}
	for _, turn := range row.turns {
		row.play(t, c, id, &from, d.Work, turn)
	}
	if row.neverBlocked {
		for _, st := range c.states(id) {
			if strings.HasPrefix(st, "blocked") {
				t.Errorf("%s never asks, but agentd said %s; states %s", row.name, st, strings.Join(c.states(id), " → "))
			}
		}
	}
	if row.after != nil {
		row.after(t, c, id, d.Work)
	}
	c.mustCall("session/kill", map[string]any{"sessionId": id}, nil)
	c.waitState(id, "exited", &from, 20*time.Second)
	t.Logf("states: %s", c.stateTrail(id))
}

// labelsMatch says whether labels are want, an entry of want ending in
// "*" matching a label that begins with the rest.
func labelsMatch(labels, want []string) bool {
	return slices.EqualFunc(labels, want, func(l, w string) bool {
		if p, ok := strings.CutSuffix(w, "*"); ok {
			return strings.HasPrefix(l, p)
		}
		return l == w
	})
}

// promptLabels are a blocked state's option labels, in order.
func promptLabels(b stateNote) []string {
	var labels []string
	for _, o := range b.Prompt.Options {
		labels = append(labels, o.Label)
	}
	return labels
}

// play runs one turn on session id and checks it (see TestAgents).
func (row agentRow) play(t *testing.T, c *stdioClient, id string, from *int, work string, turn agentTurn) {
	t.Helper()
	c.mustCall("runtime_send", map[string]any{"sessionId": id, "text": turn.send, "submit": true}, nil)
	awaitSubmitted(t, c, id, *from, turn.send)
	// A turn blocked or ended has worked: agentd may have read no frame of
	// the work between two looks (a tool call that comes at once).
	turnRan := []string{"blocked", "done", "error"}
	if turn.working {
		c.waitStateOr(id, "working", turnRan, from, 60*time.Second)
	}
	path := filepath.Join(work, turn.file)
	if turn.question != "" {
		b := row.awaitPrompt(t, c, id, from, turn)
		if turn.attention && !b.Attention {
			t.Errorf("the prompt's blocked state carries no attention")
		}
		if err := c.call("runtime_send", map[string]any{"sessionId": id, "text": "1", "submit": false}, nil); rpcCode(err) != -32020 {
			t.Fatalf("runtime_send while blocked: %v, want refused (-32020)", err)
		}
		if _, err := os.Stat(path); turn.file != "" && err == nil {
			t.Fatalf("%s exists before the answer", turn.file)
		}
		var res struct {
			State  string
			Prompt *struct {
				PromptID string `json:"promptId"`
			}
		}
		answer := func() {
			c.mustCall("runtime_answer", map[string]any{"sessionId": id, "promptId": b.Prompt.PromptID, "optionId": optionByLabel(t, b, turn.answer)}, &res)
		}
		stillThere := func() bool {
			return res.State == "blocked" && res.Prompt != nil && res.Prompt.PromptID == b.Prompt.PromptID
		}
		// agentd waits 3 s for the prompt to leave before it returns; a
		// loaded agent can take longer, and the state stream says when it
		// went. Only a prompt still there then did not take the keys, and
		// agentd lets the same answer through again.
		answer()
		if stillThere() && !c.awaitPromptLeft(id, b.Prompt.PromptID, from, 30*time.Second) {
			noteRetry(t, fmt.Sprintf("%q: the prompt was still there 30 s after the answer (the keys did not take); answered again", turn.answer))
			answer()
			if stillThere() && !c.awaitPromptLeft(id, b.Prompt.PromptID, from, 30*time.Second) {
				t.Fatalf("the prompt stayed after answering %q twice; states %s; screen:\n%s", turn.answer, c.stateTrail(id), c.screen(id))
			}
		}
		if turn.workingAfter {
			c.waitStateOr(id, "working", turnRan, from, 60*time.Second)
		}
		if f := turn.then; f != nil && !f.maybe {
			r := c.waitPrompt(id, from, 30*time.Second)
			for r.Prompt.PromptID == b.Prompt.PromptID {
				r = c.waitPrompt(id, from, 30*time.Second)
			}
			if r.Prompt.Question != f.question || f.options != nil && !labelsMatch(promptLabels(r), f.options) {
				t.Fatalf("after %q: prompt %+v, want %q with options %q; screen:\n%s", turn.answer, r.Prompt, f.question, f.options, c.screen(id))
			}
			c.mustCall("runtime_answer", map[string]any{"sessionId": id, "promptId": r.Prompt.PromptID, "optionId": optionByLabel(t, r, f.answer)}, nil)
		}
	}
	idle := row.awaitEnd(t, c, id, from, turn)
	// The turn's end follows the command it ran (or refused): its file is
	// there, or not, by now.
	if turn.file != "" {
		if _, err := os.Stat(path); (err == nil) != turn.made {
			t.Errorf("after answering %q and the turn's end: %s exists = %v, want %v; states %s; screen:\n%s", turn.answer, turn.file, err == nil, turn.made, c.stateTrail(id), c.screen(id))
		}
	}
	if !idle {
		c.mustCall("session/seen", map[string]any{"sessionId": id}, nil)
		c.waitState(id, "idle", from, 30*time.Second)
	}
}

// awaitSubmitted waits for a task sent with runtime_send to start: any
// state but idle. An agent still idle 20 s later with the task in its
// composer let the Enter go by (Auggie, once, in a fresh-clone run beside
// other work: the text landed, the Enter did not): a person presses Enter
// again, and so does the test, listed by noteRetry. It reads the states
// from from on and moves nothing.
func awaitSubmitted(t *testing.T, c *stdioClient, id string, from int, task string) {
	t.Helper()
	if c.awaitNotState(id, "idle", from, 20*time.Second) {
		return
	}
	if !strings.Contains(c.screen(id), task) {
		return // not in the composer: whatever happened, another Enter is no person's
	}
	noteRetry(t, fmt.Sprintf("%q sat in the composer, idle, 20 s after runtime_send; pressed Enter again", task))
	c.mustCall("session/input", map[string]any{"sessionId": id, "data": "\r"}, nil)
}

// awaitPrompt waits for the turn's prompt: working, then blocked (a tool
// call that comes at once may leave no screen between the two) with the
// question and options the turn has.
func (row agentRow) awaitPrompt(t *testing.T, c *stdioClient, id string, from *int, turn agentTurn) stateNote {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		b := nextState(c, id, from, time.Until(deadline))
		if b.State != "working" && b.State != "blocked" {
			t.Fatalf("after sending %q: %s (%s), want working or blocked; states %s", turn.send, b.State, b.Reason, c.stateTrail(id))
		}
		if b.State != "blocked" || b.Prompt == nil || len(b.Prompt.Options) == 0 {
			continue
		}
		labels := promptLabels(b)
		if b.Prompt.Question == turn.question && (turn.kind == "" || b.Prompt.Kind == turn.kind) && labelsMatch(labels, turn.options) {
			t.Logf("%q: %s prompt %q %q", turn.send, b.Prompt.Kind, b.Prompt.Question, labels)
			return b
		}
		if !turn.settles {
			t.Fatalf("blocked prompt: %s %q options %q; want %s %q %q; screen:\n%s", b.Prompt.Kind, b.Prompt.Question, labels, turn.kind, turn.question, turn.options, c.screen(id))
		}
		t.Logf("passed over a drawing of the prompt: %q %q", b.Prompt.Question, labels)
	}
}

// awaitEnd waits for the turn's end: done with its outcome (any, with
// none given), answering a follow-up prompt that may come on the way. It
// says whether the turn ended idle with no done (idleEnds only).
func (row agentRow) awaitEnd(t *testing.T, c *stdioClient, id string, from *int, turn agentTurn) (idle bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		n := nextState(c, id, from, time.Until(deadline))
		switch {
		case n.State == "blocked" && turn.then != nil && turn.then.maybe && n.Prompt != nil && n.Prompt.Question == turn.then.question:
			c.mustCall("runtime_answer", map[string]any{"sessionId": id, "promptId": n.Prompt.PromptID, "optionId": optionByLabel(t, n, turn.then.answer)}, nil)
		case n.State == "idle" && turn.idleEnds:
			return true
		case n.State == "done" && (turn.outcome == "" || n.Outcome == turn.outcome):
			return false
		case n.State == "done" && turn.firstDone:
			t.Fatalf("done outcome %q (%s), want %s; states %s", n.Outcome, n.Reason, turn.outcome, c.stateTrail(id))
		case n.State == "error":
			t.Fatalf("waiting for the end of %q: error (%s) %q; states %s; screen:\n%s", turn.send, n.Reason, n.Message, c.stateTrail(id), c.screen(id))
		}
	}
}

// noCI unsets CI for the spawn: agentd passes its own environment on,
// and under CI=true (as .ci/run sets) Ink-based agents stop redrawing and
// taking keys (Grok stalled on its logo) and Copilot draws another
// composer. A person's agent does not run with CI set.
var noCI = []string{"CI"}

// waitIdleNoDone waits for idle after a first-run prompt was answered: no
// task was given, so no turn ended, and no state on the way is done.
func waitIdleNoDone(t *testing.T, c *stdioClient, id string, from *int) {
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

// nextState waits for the session's next state notification, whichever.
func nextState(c *stdioClient, sessionID string, from *int, timeout time.Duration) stateNote {
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

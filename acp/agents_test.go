package acp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/fixtures/fakemodel"
	"github.com/agentd/agentd/fixtures/lab"
)

// End-to-end tests with the REAL ACP agents, offline: Claude Code ACP
// (@zed-industries/claude-code-acp) and Gemini CLI (gemini --acp), each
// against the repository's fake model server on 127.0.0.1. Install them
// with `make agents` (go run ./fixtures/lab/install).

// requireAgent finds an installed agent CLI (see lab.Require).
func requireAgent(t *testing.T, name string) string { t.Helper(); return lab.Require(t, name) }

// realAgent is one real agent under test.
type realAgent struct {
	t   *testing.T
	c   *Client
	rec *recorder
	srv *fakemodel.Server
	dir lab.Dirs
}

// startReal starts l's agent in d with o's extra settings.
func startReal(t *testing.T, l *lab.Launch, srv *fakemodel.Server, d lab.Dirs, o Options) *realAgent {
	t.Helper()
	t.Cleanup(l.Cleanup)
	rec := newRecorder()
	o.Argv, o.Env, o.Cwd, o.Handler = l.Argv, l.Env, d.Work, rec
	if o.Log == nil {
		o.Log = testLogger(t)
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 45 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	began := time.Now()
	c, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started in %v", time.Since(began).Round(time.Millisecond))
	a := &realAgent{t: t, c: c, rec: rec, srv: srv, dir: d}
	t.Cleanup(func() {
		_ = c.Close()
		if t.Failed() || os.Getenv("ACP_TEST_DUMP") != "" {
			for i, r := range srv.Requests() {
				t.Logf("model request %d: %s last=%q toolResult=%v", i, r.Path, r.LastUser, r.ToolResult)
			}
			rec.mu.Lock()
			for _, u := range rec.updates {
				if u.Kind != "available_commands_update" {
					t.Logf("update: %s", u.Raw)
				}
			}
			t.Logf("events: %s", strings.Join(rec.log, " "))
			rec.mu.Unlock()
		}
	})
	return a
}

// turn is a prompt running in the background.
type turn struct {
	stop chan string
	err  chan error
}

func (a *realAgent) prompt(text string) *turn {
	tr := &turn{stop: make(chan string, 1), err: make(chan error, 1)}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		r, err := a.c.Prompt(ctx, text)
		tr.stop <- r
		tr.err <- err
	}()
	return tr
}

func (tr *turn) wait(t *testing.T) string {
	t.Helper()
	select {
	case r := <-tr.stop:
		if err := <-tr.err; err != nil {
			t.Fatalf("Prompt: %v", err)
		}
		return r
	case <-time.After(50 * time.Second):
		t.Fatal("the turn did not end")
		return ""
	}
}

// optionOfKind is the id of the permission's first option of kind.
func optionOfKind(t *testing.T, p Permission, kind string) string {
	t.Helper()
	for _, o := range p.Options {
		if o.Kind == kind {
			return o.ID
		}
	}
	t.Fatalf("permission %q has no %s option: %+v", p.Title, kind, p.Options)
	return ""
}

func (a *realAgent) settledFor(key string) Settled {
	a.rec.mu.Lock()
	defer a.rec.mu.Unlock()
	for _, s := range a.rec.settled {
		if s.Key == key {
			return s
		}
	}
	return Settled{}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// scenario is one real agent driven through three turns in one session.
type scenario struct {
	agent string // the binary's name in the agents cache
	// launch prepares the agent with script in d.
	launch func(bin string, d lab.Dirs, script *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error)
	// touch is the model's tool call that creates file in the work folder.
	touch func(file string) *fakemodel.ToolCall
	// rejectedStop is the stopReason the agent reports after a rejected
	// permission (agents differ; observed with the pinned versions).
	rejectedStop string
	opts         Options
	// check looks at the agent's updates after the allowed turn.
	check func(t *testing.T, a *realAgent, p Permission)
}

// run: (1) a permission answered with the agent's allow_once option — the
// tool really runs, the turn ends end_turn (completed); (2) a permission
// answered with its reject_once option — nothing runs, the turn ends as
// the agent reports; (3) Cancel while a permission is pending — it
// settles cancelled, the turn ends cancelled (interrupted).
func (sc scenario) run(t *testing.T) {
	bin := requireAgent(t, sc.agent)
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{
		Prompt:    "create the first marker",
		Reply:     fakemodel.Reply{Text: "I'll create the first marker.", Tool: sc.touch("first.txt")},
		AfterTool: fakemodel.Reply{Text: "First turn over."},
	}, {
		Prompt:    "create the second marker",
		Reply:     fakemodel.Reply{Text: "I'll create the second marker.", Tool: sc.touch("second.txt")},
		AfterTool: fakemodel.Reply{Text: "Second turn over."},
	}, {
		Prompt:    "create the third marker",
		Reply:     fakemodel.Reply{Text: "I'll create the third marker.", Tool: sc.touch("third.txt")},
		AfterTool: fakemodel.Reply{Text: "Third turn over."},
	}}}
	l, srv, err := sc.launch(bin, d, script)
	if err != nil {
		t.Fatal(err)
	}
	a := startReal(t, l, srv, d, sc.opts)
	t.Logf("agent %s %s, auth methods %v", a.c.Info().Name, a.c.Info().Version, a.c.Info().AuthMethods)

	// 1. Allowed.
	tr := a.prompt("create the first marker")
	p := a.rec.waitPermission(t, 1)
	t.Logf("permission: title %q kind %q tool call %q input %s options %+v; raw %s", p.Title, p.Kind, p.ToolCallID, p.RawInput, p.Options, p.Raw)
	if p.ToolCallID == "" || !strings.Contains(p.Title, "first.txt") || len(p.Options) < 2 {
		t.Errorf("permission %+v", p)
	}
	if got := a.c.Pending(); len(got) != 1 || got[0].Key != p.Key {
		t.Errorf("Pending() = %+v", got)
	}
	allow := optionOfKind(t, p, "allow_once")
	if err := a.c.Answer(p.Key, allow); err != nil {
		t.Fatal(err)
	}
	if r := tr.wait(t); r != "end_turn" || Outcome(r) != "completed" {
		t.Errorf("allowed turn: stopReason %q", r)
	}
	if !exists(filepath.Join(d.Work, "first.txt")) {
		t.Error("the allowed tool did not run: first.txt missing")
	}
	if s := a.settledFor(p.Key); s.Reason != SettledAnswered || s.Outcome != "selected" || s.OptionID != allow {
		t.Errorf("settled %+v", s)
	}
	a.rec.mu.Lock()
	completed := slices.ContainsFunc(a.rec.updates, func(u Update) bool {
		return u.ToolCall != nil && u.ToolCall.ID == p.ToolCallID && u.ToolCall.Status == "completed"
	})
	a.rec.mu.Unlock()
	if !completed {
		t.Errorf("no update says tool call %s completed", p.ToolCallID)
	}
	if sc.check != nil {
		sc.check(t, a, p)
	}

	// 2. Rejected.
	tr = a.prompt("create the second marker")
	p = a.rec.waitPermission(t, 2)
	reject := optionOfKind(t, p, "reject_once")
	if err := a.c.Answer(p.Key, reject); err != nil {
		t.Fatal(err)
	}
	r := tr.wait(t)
	t.Logf("after a rejection the agent reported stopReason %q (%s)", r, Outcome(r))
	if r != sc.rejectedStop {
		t.Errorf("rejected turn: stopReason %q, want %q", r, sc.rejectedStop)
	}
	if exists(filepath.Join(d.Work, "second.txt")) {
		t.Error("the rejected tool ran: second.txt exists")
	}
	if s := a.settledFor(p.Key); s.Reason != SettledAnswered || s.OptionID != reject {
		t.Errorf("settled %+v", s)
	}

	// 3. Cancelled while the permission is pending.
	tr = a.prompt("create the third marker")
	p = a.rec.waitPermission(t, 3)
	if err := a.c.Cancel(); err != nil {
		t.Fatal(err)
	}
	if r := tr.wait(t); r != "cancelled" || Outcome(r) != "interrupted" {
		t.Errorf("cancelled turn: stopReason %q", r)
	}
	if s := a.settledFor(p.Key); s.Reason != SettledCancelled || s.Outcome != "cancelled" {
		t.Errorf("settled %+v", s)
	}
	if len(a.c.Pending()) != 0 {
		t.Errorf("still pending: %+v", a.c.Pending())
	}
	time.Sleep(300 * time.Millisecond) // a tool that ran anyway would show by now
	if exists(filepath.Join(d.Work, "third.txt")) {
		t.Error("the cancelled tool ran: third.txt exists")
	}

	// Close ends the agent.
	began := time.Now()
	if err := a.c.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("closed in %v: %+v", time.Since(began).Round(time.Millisecond), a.c.Exit())
	a.rec.wait(t, "exited", func() bool { return a.rec.exit != nil })
}

func claudeACPLaunch(bin string, d lab.Dirs, script *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
	return lab.ClaudeACP(bin, d, script, lab.ClaudeOptions{})
}

func geminiACPLaunch(bin string, d lab.Dirs, script *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
	return lab.Gemini(bin, d, script, lab.GeminiOptions{Args: []string{"--acp"}})
}

// Claude Code ACP runs the command itself (its Bash tool).
func TestClaudeACP(t *testing.T) {
	scenario{
		agent:  "claude-code-acp",
		launch: claudeACPLaunch,
		touch: func(file string) *fakemodel.ToolCall {
			return lab.ClaudeBash("touch DIR/"+file, "Create "+file)
		},
		rejectedStop: "end_turn",
		check: func(t *testing.T, a *realAgent, p Permission) {
			// Claude Code ACP announces a tool call twice with one id; the
			// client reports the second as an update of the first.
			a.rec.mu.Lock()
			defer a.rec.mu.Unlock()
			var news, repeats int
			for _, u := range a.rec.updates {
				if u.Kind == "tool_call" && u.ToolCall != nil && u.ToolCall.ID == p.ToolCallID {
					if u.NewToolCall {
						news++
					} else {
						repeats++
					}
				}
			}
			if news != 1 {
				t.Errorf("tool_call %s: %d new, %d repeats", p.ToolCallID, news, repeats)
			}
			t.Logf("tool_call sent %d times for one id", news+repeats)
		},
	}.run(t)
}

// Gemini CLI in ACP mode runs the command itself (its shell tool).
func TestGeminiACP(t *testing.T) {
	scenario{
		agent:  "gemini",
		launch: geminiACPLaunch,
		touch: func(file string) *fakemodel.ToolCall {
			return lab.GeminiShell("touch "+file, "Create "+file)
		},
		rejectedStop: "end_turn",
	}.run(t)
}

// Claude Code ACP with the client's own tools advertised: its Bash tool
// becomes mcp__acp__Bash, which runs the command in a terminal the client
// hosts (terminal/create on ExecTerminals), and its Write tool becomes
// mcp__acp__Write, which writes through fs/write_text_file — refused
// outside the session folder.
func TestClaudeACPClientTerminalAndFS(t *testing.T) {
	bin := requireAgent(t, "claude-code-acp")
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(d.Work), "outside.txt")
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{
		Prompt:    "run it in your terminal",
		Reply:     fakemodel.Reply{Tool: lab.ClaudeACPBash("echo from-the-terminal > terminal.txt", "Write terminal.txt")},
		AfterTool: fakemodel.Reply{Text: "Ran it."},
	}, {
		Prompt:    "write the notes",
		Reply:     fakemodel.Reply{Tool: lab.ClaudeACPWrite("DIR/notes.md", "# Notes\n")},
		AfterTool: fakemodel.Reply{Text: "Wrote it."},
	}, {
		Prompt:    "write outside",
		Reply:     fakemodel.Reply{Tool: lab.ClaudeACPWrite("DIR/../outside.txt", "escaped\n")},
		AfterTool: fakemodel.Reply{Text: "Tried."},
	}}}
	l, srv, err := lab.ClaudeACP(bin, d, script, lab.ClaudeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	host := &ExecTerminals{Env: l.Env}
	log := testLogger(t)
	a := startReal(t, l, srv, d, Options{Terminals: host, FS: true, Log: log})
	allowNext := func(n int, prompt string) {
		t.Helper()
		tr := a.prompt(prompt)
		p := a.rec.waitPermission(t, n)
		t.Logf("permission %d: %q kind %q", n, p.Title, p.Kind)
		if err := a.c.Answer(p.Key, optionOfKind(t, p, "allow_once")); err != nil {
			t.Fatal(err)
		}
		if r := tr.wait(t); r != "end_turn" {
			t.Errorf("%s: stopReason %q", prompt, r)
		}
	}
	allowNext(1, "run it in your terminal")
	if b, err := os.ReadFile(filepath.Join(d.Work, "terminal.txt")); err != nil || string(b) != "from-the-terminal\n" {
		t.Errorf("terminal.txt: %q, %v", b, err)
	}
	allowNext(2, "write the notes")
	if b, err := os.ReadFile(filepath.Join(d.Work, "notes.md")); err != nil || string(b) != "# Notes\n" {
		t.Errorf("notes.md: %q, %v", b, err)
	}
	allowNext(3, "write outside")
	if exists(outside) {
		t.Errorf("%s was written", outside)
	}
	l2 := logged(log)
	for _, want := range []string{"terminal created", "served fs/write_text_file", "refused fs/write_text_file"} {
		if !strings.Contains(l2, want) {
			t.Errorf("the log does not say %q", want)
		}
	}
	a.rec.mu.Lock()
	defer a.rec.mu.Unlock()
	last := a.rec.perms[2].ToolCallID
	failed := slices.ContainsFunc(a.rec.updates, func(u Update) bool {
		return u.ToolCall != nil && u.ToolCall.ID == last && u.ToolCall.Status == "failed"
	})
	if !failed {
		t.Errorf("the refused write was not reported failed")
	}
}

// Gemini CLI with fs advertised reads and writes files through the
// client (fs/read_text_file, fs/write_text_file). The file exists first:
// Gemini 0.61.0 checks a file with fs/read_text_file before writing it and
// cannot tell a JSON-RPC "not found" error from other failures (its ACP
// SDK rejects with a plain object, which its ENOENT test turns into
// "[object Object]"), so creating a new file through the client fails
// there with "Error checking existing file".
func TestGeminiACPClientFS(t *testing.T) {
	bin := requireAgent(t, "gemini")
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{
		Prompt:    "write the notes",
		Reply:     fakemodel.Reply{Text: "Writing the notes.", Tool: lab.GeminiTool("write_file", map[string]any{"file_path": "notes.md", "content": "# Notes\n"})},
		AfterTool: fakemodel.Reply{Text: "Wrote notes.md."},
	}}}
	l, srv, err := lab.Gemini(bin, d, script, lab.GeminiOptions{Args: []string{"--acp"}, Files: map[string]string{"notes.md": "old notes\n"}})
	if err != nil {
		t.Fatal(err)
	}
	log := testLogger(t)
	a := startReal(t, l, srv, d, Options{FS: true, Log: log})
	tr := a.prompt("write the notes")
	p := a.rec.waitPermission(t, 1)
	t.Logf("permission: %q kind %q options %+v", p.Title, p.Kind, p.Options)
	if err := a.c.Answer(p.Key, optionOfKind(t, p, "allow_once")); err != nil {
		t.Fatal(err)
	}
	if r := tr.wait(t); r != "end_turn" {
		t.Errorf("stopReason %q", r)
	}
	if b, err := os.ReadFile(filepath.Join(d.Work, "notes.md")); err != nil || string(b) != "# Notes\n" {
		t.Errorf("notes.md: %q, %v", b, err)
	}
	l2 := logged(log)
	for _, want := range []string{"served fs/read_text_file", "served fs/write_text_file"} {
		if !strings.Contains(l2, want) {
			t.Errorf("the log does not say %q", want)
		}
	}
}

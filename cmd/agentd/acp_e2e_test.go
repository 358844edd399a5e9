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

// acpScript asks for a tool call that creates <name>.txt for each of the
// three turns the ACP tests run.
func acpScript(tool func(file string) *fakemodel.ToolCall) *fakemodel.Script {
	s := &fakemodel.Script{}
	for _, name := range []string{"first", "second", "third"} {
		s.Rules = append(s.Rules, fakemodel.Rule{
			Prompt:    "make the " + name + " file",
			Reply:     fakemodel.Reply{Tool: tool(name + ".txt")},
			AfterTool: fakemodel.Reply{Text: "Done with " + name + "."},
		})
	}
	return s
}

// acpFlow drives a real ACP agent through the real agentd: a prompt turn
// blocks on the agent's own permission request with the agent's own
// options; runtime_answer allows and the tool runs; a second turn is
// rejected; a third is cancelled while its permission is pending. Updates
// reach the editor as session/update before the blocked state.
//
// The session is spawned under agent, a name with no screen manifest: the
// agent's own initialize names it.
func acpFlow(t *testing.T, argv, env []string, work string, agent, allow, reject string, terminals bool) {
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": argv, "cwd": work, "env": envMap(env, lab.ClaudeUnset...), "protocol": "acp", "agent": agent}, &s)
	if s.Agent != agent || s.AgentInfo == nil || s.AgentInfo.Name == "" {
		t.Fatalf("spawned %+v, want agent %q and the agent's own agentInfo", s, agent)
	}
	if want := s.AgentInfo.Title; want != "" && s.Name != want || want == "" && s.Name != s.AgentInfo.Name {
		t.Errorf("session name %q, want the agent's own %+v", s.Name, *s.AgentInfo)
	}
	t.Logf("agentInfo %+v; session name %q", *s.AgentInfo, s.Name)
	from := 0
	if idle := c.waitState(s.SessionID, "idle", &from, 60*time.Second); idle.StateSource != "acp" {
		t.Fatalf("ready state from %s, want acp", idle.StateSource)
	}
	if err := c.call("session/read", map[string]any{"sessionId": s.SessionID}, nil); rpcCode(err) != -32030 {
		t.Errorf("session/read on an ACP session: %v, want -32030", err)
	}
	turn := func(name, option string) stateNote {
		c.mustCall("session/prompt", map[string]any{"sessionId": s.SessionID, "text": "please make the " + name + " file"}, nil)
		c.waitState(s.SessionID, "working", &from, 20*time.Second)
		b := c.waitPrompt(s.SessionID, &from, 60*time.Second)
		// Attention is raised once per state in the cooldown: on the first.
		if b.StateSource != "acp" || b.Reason != "acp.request_permission" || b.Attention != (name == "first") {
			t.Errorf("%s: blocked %+v, want from the ACP request, attention only the first time", name, b)
		}
		ids := []string{}
		for _, o := range b.Prompt.Options {
			ids = append(ids, o.ID)
		}
		if !slices.Contains(ids, allow) || !slices.Contains(ids, reject) {
			t.Fatalf("%s: options %v, want the agent's own %s and %s", name, ids, allow, reject)
		}
		// The prompt says which command it is about, so that three
		// requests that may read the same are told apart: from the input
		// where the agent sends rawInput (Claude), else from the title
		// (Gemini sends the command as the title and no rawInput).
		if sub := b.Prompt.Subject; sub == nil || !strings.Contains(sub.Text, "touch "+name+".txt") || sub.Kind != "command" {
			t.Errorf("%s: prompt subject %+v, want the command touch %s.txt", name, sub, name)
		} else {
			t.Logf("%s: asked %q about %s %q; options %v", name, b.Prompt.Question, sub.Kind, sub.Text, ids)
		}
		if b.Agent != agent {
			t.Errorf("%s: blocked state names agent %q, want %q", name, b.Agent, agent)
		}
		if option != "" {
			var res struct{ State string }
			c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": option}, &res)
			if res.State == "blocked" {
				t.Fatalf("%s: still blocked after the answer", name)
			}
		}
		return b
	}
	// 1. Allowed: the tool runs, the turn completes.
	turn("first", allow)
	if done := c.waitState(s.SessionID, "done", &from, 60*time.Second); done.Outcome != "completed" {
		t.Errorf("allowed turn ended %+v, want completed", done)
	}
	if _, err := os.Stat(filepath.Join(work, "first.txt")); err != nil {
		t.Errorf("the allowed tool did not run: %v", err)
	}
	if terminals {
		// The agent ran its command through terminal/*: agentd hosted it as
		// a session of its own that the editor can see.
		var list struct {
			Sessions []struct {
				Name  string `json:"name"`
				State string `json:"state"`
				Exit  *struct {
					ExitCode int `json:"exitCode"`
				} `json:"exit"`
			} `json:"sessions"`
		}
		c.mustCall("session/list", nil, &list)
		found := false
		for _, ls := range list.Sessions {
			if strings.HasPrefix(ls.Name, "terminal: touch first.txt") && ls.State == "exited" && ls.Exit != nil && ls.Exit.ExitCode == 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("no exited terminal session for the command in %+v", list.Sessions)
		}
	}
	c.mustCall("session/seen", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "idle", &from, 10*time.Second)
	// 2. Rejected: nothing runs; the outcome is the agent's.
	turn("second", reject)
	done := c.waitState(s.SessionID, "done", &from, 60*time.Second)
	t.Logf("rejected turn ended %s (%s)", done.Outcome, done.Reason)
	if _, err := os.Stat(filepath.Join(work, "second.txt")); err == nil {
		t.Errorf("the rejected tool ran")
	}
	c.mustCall("session/seen", map[string]any{"sessionId": s.SessionID}, nil)
	// 3. Cancelled while the permission is pending: not blocked, interrupted.
	b := turn("third", "")
	c.mustCall("session/cancel", map[string]any{"sessionId": s.SessionID}, nil)
	if done := c.waitState(s.SessionID, "done", &from, 30*time.Second); done.Outcome != "interrupted" {
		t.Errorf("cancelled turn ended %+v, want interrupted", done)
	}
	if err := c.call("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": allow}, nil); rpcCode(err) != -32021 {
		t.Errorf("answering the cancelled permission: %v, want -32021", err)
	}
	// The updates came through, before the blocked states they led to.
	updates := 0
	c.mu.Lock()
	for _, n := range c.notes {
		if n.Method == "session/update" {
			var u struct {
				SessionID string          `json:"sessionId"`
				Update    json.RawMessage `json:"update"`
			}
			_ = json.Unmarshal(n.Params, &u)
			if u.SessionID == s.SessionID && len(u.Update) > 0 {
				updates++
			}
		}
	}
	c.mu.Unlock()
	if updates == 0 {
		t.Errorf("no session/update reached the editor")
	}
	t.Logf("%d updates; states: %s", updates, strings.Join(c.states(s.SessionID), " → "))
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
}

// acpLaunch is a lab setup for an agent over ACP.
type acpLaunch func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error)

// TestAgentsACP runs each agent that speaks ACP, offline against the fake
// model server, through the real agentd (acpFlow): allowed, rejected,
// cancelled. One row per agent, a subtest named after the agent it is
// spawned as (-run 'TestAgentsACP/^gemini-acp$'); a new ACP agent joins
// with a row: the installed CLI, its lab setup, the tool call that runs
// "touch FILE", and its own allow and reject option ids.
func TestAgentsACP(t *testing.T) {
	rows := []struct {
		agent, bin    string // the agent it is spawned as; the installed CLI
		launch        acpLaunch
		tool          func(file string) *fakemodel.ToolCall
		allow, reject string
		terminals     bool // it runs its commands through agentd's terminal/*
	}{
		{
			// agentd serves terminal/*, so Claude Code ACP runs its
			// commands through mcp__acp__Bash.
			agent: "claude-code-acp", bin: "claude-code-acp", allow: "allow", reject: "reject", terminals: true,
			launch: func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
				return lab.ClaudeACP(bin, d, s, lab.ClaudeOptions{})
			},
			tool: func(f string) *fakemodel.ToolCall { return lab.ClaudeACPBash("touch "+f, "Create "+f) },
		},
		{
			// The renamed adapter, @agentclientprotocol/claude-agent-acp,
			// in the mode its settings ask for (defaultMode "default": ask
			// first). It offers Claude Code's own Bash (not
			// mcp__acp__Bash), which runs the command itself rather than in
			// a terminal agentd hosts.
			agent: "claude-agent-acp", bin: "claude-agent-acp", allow: "allow-once", reject: "reject",
			launch: func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
				return lab.ClaudeAgentACP(bin, d, s, lab.ClaudeOptions{})
			},
			tool: func(f string) *fakemodel.ToolCall { return lab.ClaudeBash("touch "+f, "Create "+f) },
		},
		{
			agent: "gemini-acp", bin: "gemini", allow: "proceed_once", reject: "cancel",
			launch: func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
				return lab.Gemini(bin, d, s, lab.GeminiOptions{Args: []string{"--acp"}})
			},
			tool: func(f string) *fakemodel.ToolCall { return lab.GeminiShell("touch "+f, "Create "+f) },
		},
		{
			// The real Copilot CLI over ACP (copilot --acp), offline with
			// its own model on a fake chat-completions server: its own
			// option ids and labels.
			agent: "copilot-acp", bin: "copilot", allow: "allow_once", reject: "reject_once",
			launch: func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
				return lab.Copilot(bin, d, s, "--acp")
			},
			tool: func(f string) *fakemodel.ToolCall { return lab.CopilotBash("touch "+f, "Create "+f) },
		},
		{
			// The real Codex ACP adapter (@agentclientprotocol/codex-acp)
			// over its own bundled Codex, offline against a fake Responses
			// server, in the mode that asks (lab.CodexACP). Its reject is
			// "cancel", which Codex takes as an abort: the rejected turn
			// ends interrupted.
			agent: "codex-acp", bin: "codex-acp", allow: "allow_once", reject: "cancel",
			launch: func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
				return lab.CodexACP(bin, d, s, lab.CodexOptions{})
			},
			tool: func(f string) *fakemodel.ToolCall { return lab.CodexExec("touch "+f, "Create "+f) },
		},
		{
			// The real OpenCode over ACP (opencode acp), offline against a
			// fake chat-completions server.
			agent: "opencode-acp", bin: "opencode", allow: "once", reject: "reject",
			launch: func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
				return lab.OpenCode(bin, d, s, "acp")
			},
			tool: func(f string) *fakemodel.ToolCall { return lab.OpenCodeBash("touch "+f, "Create "+f) },
		},
		{
			// The real Qwen Code over ACP (qwen --acp), offline against a
			// fake chat-completions server, asking first
			// (tools.approvalMode "default").
			agent: "qwen-acp", bin: "qwen", allow: "proceed_once", reject: "cancel",
			launch: func(bin string, d lab.Dirs, s *fakemodel.Script) (*lab.Launch, *fakemodel.Server, error) {
				return lab.Qwen(bin, d, s, "--acp")
			},
			tool: func(f string) *fakemodel.ToolCall { return lab.QwenShell("touch "+f, "Create "+f) },
		},
	}
	for _, r := range rows {
		t.Run(r.agent, func(t *testing.T) {
			bin := requireAgent(t, r.bin)
			d := labDirs(t)
			l, srv, err := r.launch(bin, d, acpScript(r.tool))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Cleanup()
			defer func() {
				if t.Failed() {
					for _, r := range srv.Requests() {
						t.Logf("model request: last %q tools %v", r.LastUser, r.Tools)
					}
				}
			}()
			acpFlow(t, l.Argv, l.Env, d.Work, r.agent, r.allow, r.reject, r.terminals)
		})
	}
}

// A permission nobody answers is answered with the agent's reject option
// when --permission-timeout passes, and the state says so.
func TestACPPermissionTimeout(t *testing.T) {
	bin := requireAgent(t, "gemini")
	d := labDirs(t)
	script := acpScript(func(f string) *fakemodel.ToolCall { return lab.GeminiShell("touch "+f, "Create "+f) })
	l, _, err := lab.Gemini(bin, d, script, lab.GeminiOptions{Args: []string{"--acp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	c := startAgentd(t, "--permission-timeout", "1s")
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": envMap(l.Env), "protocol": "acp"}, &s)
	from := 0
	c.waitState(s.SessionID, "idle", &from, 60*time.Second)
	c.mustCall("session/prompt", map[string]any{"sessionId": s.SessionID, "text": "please make the first file"}, nil)
	c.waitPrompt(s.SessionID, &from, 60*time.Second)
	w := c.waitState(s.SessionID, "working", &from, 10*time.Second)
	if w.Reason != "acp.permission_timeout" {
		t.Errorf("after the timeout: %+v, want reason acp.permission_timeout", w)
	}
	c.waitState(s.SessionID, "done", &from, 60*time.Second)
	if _, err := os.Stat(filepath.Join(d.Work, "first.txt")); err == nil {
		t.Errorf("the unanswered tool ran")
	}
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
	d := labDirs(t)
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

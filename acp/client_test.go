package acp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// All tests in this file run against the in-process fake agent of
// fake_test.go: it plays the unusual cases on cue. The real agents are in
// agents_test.go.

func TestHandshakeAdvertisesOnlyWhatIsEnabled(t *testing.T) {
	for _, tc := range []struct {
		name          string
		fs            bool
		terms         TerminalHost
		wantFS, wantT bool
	}{
		{"nothing", false, nil, false, false},
		{"fs", true, nil, true, false},
		{"terminals", false, &ExecTerminals{}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := make(chan json.RawMessage, 1)
			var gotCwd string
			cwd := t.TempDir()
			c, _, err := startFake(t, Options{Cwd: cwd, FS: tc.fs, Terminals: tc.terms, ClientVersion: "1.2.3"}, func(f *fakeAgent) {
				params <- f.initialize()
				w := f.expect("session/new")
				var p struct {
					Cwd        string `json:"cwd"`
					McpServers []any  `json:"mcpServers"`
				}
				_ = json.Unmarshal(w.Params, &p)
				gotCwd = p.Cwd
				if p.McpServers == nil || len(p.McpServers) != 0 {
					t.Errorf("mcpServers = %s, want []", w.Params)
				}
				f.reply(w.ID, map[string]any{"sessionId": "s1"})
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var init struct {
				ProtocolVersion    int `json:"protocolVersion"`
				ClientCapabilities struct {
					FS struct {
						Read  bool `json:"readTextFile"`
						Write bool `json:"writeTextFile"`
					} `json:"fs"`
					Terminal bool `json:"terminal"`
				} `json:"clientCapabilities"`
				ClientInfo struct{ Name, Version string } `json:"clientInfo"`
			}
			if err := json.Unmarshal(<-params, &init); err != nil {
				t.Fatal(err)
			}
			caps := init.ClientCapabilities
			if init.ProtocolVersion != 1 || caps.FS.Read != tc.wantFS || caps.FS.Write != tc.wantFS || caps.Terminal != tc.wantT {
				t.Errorf("initialize params = %+v", init)
			}
			if init.ClientInfo.Name != "agentd" || init.ClientInfo.Version != "1.2.3" {
				t.Errorf("clientInfo = %+v", init.ClientInfo)
			}
			if gotCwd != cwd || c.SessionID() != "s1" || c.Info().Name != "fake" {
				t.Errorf("cwd %q session %q info %+v", gotCwd, c.SessionID(), c.Info())
			}
		})
	}
}

// The first request id can be 0 both ways: the client's initialize (the
// fake checks it) and the agent's permission request (the answer must
// carry id 0 back, not be taken for a notification).
func TestRequestIDZero(t *testing.T) {
	rec := newRecorder()
	answered := make(chan wire, 1)
	c, _, err := startFake(t, Options{Handler: rec}, func(f *fakeAgent) {
		w := f.expect("initialize")
		if id, err := idOf(w); err != nil || id != 0 {
			t.Errorf("initialize id = %s, want 0", w.ID)
		}
		f.reply(w.ID, map[string]any{"protocolVersion": 1})
		w = f.expect("session/new")
		f.reply(w.ID, map[string]any{"sessionId": "s1"})
		p := f.expect("session/prompt")
		f.askPermission(0, "s1", "call-1", permissionOptions)
		answered <- f.recv()
		f.reply(p.ID, map[string]any{"stopReason": "end_turn"})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan string, 1)
	go func() {
		r, err := c.Prompt(context.Background(), "go")
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	p := rec.waitPermission(t, 1)
	if err := c.Answer(p.Key, "allow"); err != nil {
		t.Fatal(err)
	}
	w := <-answered
	if string(w.ID) != "0" || !strings.Contains(string(w.Result), `"optionId":"allow"`) || !strings.Contains(string(w.Result), `"outcome":"selected"`) {
		t.Errorf("answer = %s", w.Line)
	}
	if r := <-done; r != "end_turn" || Outcome(r) != "completed" {
		t.Errorf("stopReason %q", r)
	}
}

// Updates (and a permission request) that arrive before session/new has
// answered are held and delivered in order once the session id is known;
// one for a session that never exists is dropped, not delivered.
func TestUpdatesBeforeSessionNewAreHeld(t *testing.T) {
	rec := newRecorder()
	c, _, err := startFake(t, Options{Handler: rec}, func(f *fakeAgent) {
		f.initialize()
		w := f.expect("session/new")
		f.update("s1", map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": []any{}})
		f.textChunk("s1", "early ")
		f.update("other", map[string]any{"sessionUpdate": "plan", "entries": []any{}})
		f.askPermission("early-perm", "s1", "call-0", permissionOptions)
		f.textChunk("s1", "bird")
		time.Sleep(50 * time.Millisecond) // let the client read them all first
		f.reply(w.ID, map[string]any{"sessionId": "s1"})
		f.textChunk("s1", " after")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec.wait(t, "5 events", func() bool { return len(rec.log) >= 5 })
	got := strings.Join(rec.events(), " ")
	want := "update:available_commands_update update:agent_message_chunk permission:p1 update:agent_message_chunk update:agent_message_chunk"
	if got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var text string
	for _, u := range rec.updates {
		text += u.Text
		if u.SessionID != "s1" {
			t.Errorf("update for %q delivered", u.SessionID)
		}
	}
	if text != "early bird after" {
		t.Errorf("text %q", text)
	}
}

// Unknown agent→client methods get -32601, and so do fs/* and terminal/*
// when they are not enabled (not advertised). Unknown notifications are
// ignored.
func TestUnknownMethods(t *testing.T) {
	replies := make(chan wire, 10)
	c, _, err := startFake(t, Options{}, func(f *fakeAgent) {
		f.handshake("s1")
		f.notify("_fake/notice", map[string]any{"x": 1})
		f.request(7, "_fake/whatever", map[string]any{})
		f.request(8, "fs/read_text_file", map[string]any{"sessionId": "s1", "path": "/etc/hostname"})
		f.request(9, "terminal/create", map[string]any{"sessionId": "s1", "command": "true"})
		f.request("ten", "session/fork", map[string]any{})
		for range 4 {
			replies <- f.recv()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 4 {
		select {
		case w := <-replies:
			if w.Error == nil || w.Error.Code != -32601 {
				t.Errorf("reply %s, want error -32601", w.Line)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no reply")
		}
	}
}

// Lines that are not JSON-RPC messages are logged and skipped; the
// connection goes on. A line over MaxLine is skipped whole.
func TestGarbageLinesAreSkipped(t *testing.T) {
	rec := newRecorder()
	log := testLogger(t)
	c, _, err := startFake(t, Options{Handler: rec, Log: log, MaxLine: 1024}, func(f *fakeAgent) {
		f.line("Debugger listening on ws://127.0.0.1:9229/abc")
		w := f.expect("initialize")
		f.line("")
		f.line("   ")
		f.line(`{"half": `)
		f.line(`[1,2,3]`)
		f.line(`{"jsonrpc":"2.0","id":99}`)
		f.line(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("x", 2000) + `"}}}}`)
		f.line("\x1b[31mcolour\x1b[0m")
		f.reply(w.ID, map[string]any{"protocolVersion": 1})
		w = f.expect("session/new")
		f.reply(w.ID, map[string]any{"sessionId": "s1"})
		p := f.expect("session/prompt")
		f.line("stray print from a library")
		f.textChunk("s1", "still here")
		f.reply(p.ID, map[string]any{"stopReason": "end_turn"})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Prompt(context.Background(), "hi")
	if err != nil || r != "end_turn" {
		t.Fatalf("Prompt = %q, %v", r, err)
	}
	rec.mu.Lock()
	if len(rec.updates) != 1 || rec.updates[0].Text != "still here" {
		t.Errorf("updates %+v", rec.updates)
	}
	rec.mu.Unlock()
	l := logged(log)
	for _, want := range []string{"not JSON", "Debugger listening", "not a JSON-RPC message", "over-long line"} {
		if !strings.Contains(l, want) {
			t.Errorf("log lacks %q:\n%s", want, l)
		}
	}
}

// An agent that dies while its permission request is open: the permission
// settles as exited, the turn fails with ErrExited (naming the exit and
// the agent's last stderr), Exited is called once, last.
func TestAgentDiesMidPermission(t *testing.T) {
	rec := newRecorder()
	c, _, err := startFake(t, Options{Handler: rec}, func(f *fakeAgent) {
		f.handshake("s1")
		f.expect("session/prompt")
		f.update("s1", map[string]any{"sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "rm -rf build", "kind": "execute", "status": "pending"})
		f.askPermission(1, "s1", "call-1", permissionOptions)
		time.Sleep(100 * time.Millisecond)
		_, _ = f.stderr.Write([]byte("panic: out of cheese\n"))
		time.Sleep(50 * time.Millisecond)
		f.exitCode(3)
	})
	if err != nil {
		t.Fatal(err)
	}
	_, perr := c.Prompt(context.Background(), "clean up")
	if !errors.Is(perr, ErrExited) || !strings.Contains(perr.Error(), "exit status 3") || !strings.Contains(perr.Error(), "out of cheese") {
		t.Errorf("Prompt error = %v", perr)
	}
	<-c.Done()
	rec.wait(t, "exited", func() bool { return rec.exit != nil })
	got := strings.Join(rec.events(), " ")
	if got != "update:tool_call permission:p1 settled:p1:exited exited" {
		t.Errorf("events %s", got)
	}
	if e := c.Exit(); e.Code != 3 || e.Err == nil {
		t.Errorf("exit %+v", e)
	}
	if len(c.Pending()) != 0 {
		t.Errorf("pending %v", c.Pending())
	}
	if err := c.Answer("p1", "allow"); !errors.Is(err, ErrUnknownPermission) {
		t.Errorf("Answer after exit = %v", err)
	}
	if _, err := c.Prompt(context.Background(), "again"); !errors.Is(err, ErrExited) {
		t.Errorf("Prompt after exit = %v", err)
	}
	if err := c.Cancel(); !errors.Is(err, ErrExited) {
		t.Errorf("Cancel after exit = %v", err)
	}
}

// A permission nobody answers is answered with the agent's reject option
// (reject_once first, then reject_always, else "cancelled").
func TestPermissionTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []map[string]any
		outcome string
		option  string
	}{
		{"reject_once", []map[string]any{
			{"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
			{"optionId": "never", "name": "Never", "kind": "reject_always"},
			{"optionId": "cancel", "name": "Reject", "kind": "reject_once"},
		}, "selected", "cancel"},
		{"reject_always", []map[string]any{
			{"optionId": "ok", "name": "Allow", "kind": "allow_once"},
			{"optionId": "never", "name": "Never", "kind": "reject_always"},
		}, "selected", "never"},
		{"none", []map[string]any{
			{"optionId": "ok", "name": "Allow", "kind": "allow_once"},
		}, "cancelled", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			answer := make(chan wire, 1)
			c, _, err := startFake(t, Options{Handler: rec, PermissionTimeout: 150 * time.Millisecond}, func(f *fakeAgent) {
				f.handshake("s1")
				p := f.expect("session/prompt")
				f.askPermission(5, "s1", "call-1", tc.opts)
				answer <- f.recv()
				f.reply(p.ID, map[string]any{"stopReason": "end_turn"})
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			if _, err := c.Prompt(context.Background(), "x"); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d < 150*time.Millisecond {
				t.Errorf("answered after %v", d)
			}
			w := <-answer
			var res struct {
				Outcome struct {
					Outcome  string `json:"outcome"`
					OptionID string `json:"optionId"`
				} `json:"outcome"`
			}
			_ = json.Unmarshal(w.Result, &res)
			if string(w.ID) != "5" || res.Outcome.Outcome != tc.outcome || res.Outcome.OptionID != tc.option {
				t.Errorf("answer %s", w.Line)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.settled) != 1 || rec.settled[0].Reason != SettledTimeout || rec.settled[0].OptionID != tc.option || rec.settled[0].Outcome != tc.outcome {
				t.Errorf("settled %+v", rec.settled)
			}
		})
	}
}

// Cancel sends session/cancel and answers the open permission "cancelled"
// itself; the agent then ends the turn with stopReason cancelled.
func TestCancelSettlesPendingPermissions(t *testing.T) {
	rec := newRecorder()
	seen := make(chan []wire, 1)
	c, _, err := startFake(t, Options{Handler: rec}, func(f *fakeAgent) {
		f.handshake("s1")
		p := f.expect("session/prompt")
		f.askPermission(1, "s1", "call-1", permissionOptions)
		f.askPermission(2, "s1", "call-2", permissionOptions)
		got := []wire{f.recv(), f.recv(), f.recv()}
		seen <- got
		f.reply(p.ID, map[string]any{"stopReason": "cancelled"})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan string, 1)
	go func() {
		r, err := c.Prompt(context.Background(), "x")
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	rec.waitPermission(t, 2)
	if n := len(c.Pending()); n != 2 {
		t.Fatalf("pending %d", n)
	}
	if err := c.Cancel(); err != nil {
		t.Fatal(err)
	}
	got := <-seen
	if got[0].Method != "session/cancel" || !strings.Contains(string(got[0].Params), `"sessionId":"s1"`) {
		t.Errorf("first after cancel: %s", got[0].Line)
	}
	for i, w := range got[1:] {
		if string(w.ID) != []string{"1", "2"}[i] || !strings.Contains(string(w.Result), `"outcome":"cancelled"`) {
			t.Errorf("permission answer %s", w.Line)
		}
	}
	if r := <-done; r != "cancelled" || Outcome(r) != "interrupted" {
		t.Errorf("stopReason %q", r)
	}
	if ev := strings.Join(rec.events(), " "); ev != "permission:p1 permission:p2 settled:p1:cancelled settled:p2:cancelled" {
		t.Errorf("events %s", ev)
	}
	if len(c.Pending()) != 0 {
		t.Error("still pending")
	}
}

func TestAnswerErrorsAndBusy(t *testing.T) {
	rec := newRecorder()
	answer := make(chan wire, 1)
	c, _, err := startFake(t, Options{Handler: rec}, func(f *fakeAgent) {
		f.handshake("s1")
		p := f.expect("session/prompt")
		f.askPermission(1, "s1", "call-1", permissionOptions)
		answer <- f.recv()
		f.reply(p.ID, map[string]any{"stopReason": "refusal"})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan string, 1)
	go func() {
		r, _ := c.Prompt(context.Background(), "x")
		done <- r
	}()
	p := rec.waitPermission(t, 1)
	if _, err := c.Prompt(context.Background(), "y"); !errors.Is(err, ErrBusy) {
		t.Errorf("second Prompt = %v", err)
	}
	if err := c.Answer("p9", "allow"); !errors.Is(err, ErrUnknownPermission) {
		t.Errorf("unknown key: %v", err)
	}
	if err := c.Answer(p.Key, "proceed_once"); !errors.Is(err, ErrUnknownOption) {
		t.Errorf("unknown option: %v", err)
	}
	if len(c.Pending()) != 1 {
		t.Fatal("a refused answer settled the permission")
	}
	if p.Title != "touch marker.txt" || p.Kind != "execute" || p.ToolCallID != "call-1" || len(p.Options) != 3 || p.Options[1] != (Option{ID: "allow", Name: "Allow", Kind: "allow_once"}) {
		t.Errorf("permission %+v", p)
	}
	if err := c.Answer(p.Key, "reject"); err != nil {
		t.Fatal(err)
	}
	if w := <-answer; !strings.Contains(string(w.Result), `"optionId":"reject"`) {
		t.Errorf("answer %s", w.Line)
	}
	if err := c.Answer(p.Key, "reject"); !errors.Is(err, ErrUnknownPermission) {
		t.Errorf("second answer: %v", err)
	}
	if r := <-done; Outcome(r) != "failed" {
		t.Errorf("stopReason %q", r)
	}
}

// A tool_call sent twice with one id is one call: the second is an
// update. A permission without title/kind takes them from the call.
func TestRepeatedToolCallIsAnUpdate(t *testing.T) {
	rec := newRecorder()
	c, _, err := startFake(t, Options{Handler: rec}, func(f *fakeAgent) {
		f.handshake("s1")
		p := f.expect("session/prompt")
		f.update("s1", map[string]any{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Terminal", "kind": "execute", "status": "pending"})
		f.update("s1", map[string]any{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "touch marker.txt", "kind": "execute", "status": "pending"})
		f.request(3, "session/request_permission", map[string]any{
			"sessionId": "s1", "toolCall": map[string]any{"toolCallId": "t1"}, "options": permissionOptions,
		})
		f.recv()
		f.update("s1", map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"})
		f.update("s1", map[string]any{"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "ls", "kind": "read"})
		f.reply(p.ID, map[string]any{"stopReason": "end_turn"})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		p := rec.waitPermission(t, 1)
		if p.Title != "touch marker.txt" || p.Kind != "execute" {
			t.Errorf("permission %+v", p)
		}
		_ = c.Answer(p.Key, "allow")
	}()
	if _, err := c.Prompt(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var got []string
	for _, u := range rec.updates {
		got = append(got, u.Kind+"/"+u.ToolCall.ID+"/"+u.ToolCall.Title+"/"+u.ToolCall.Status+"/"+map[bool]string{true: "new", false: "old"}[u.NewToolCall])
	}
	want := "tool_call/t1/Terminal/pending/new tool_call/t1/touch marker.txt/pending/old tool_call_update/t1/touch marker.txt/completed/old tool_call/t2/ls//new"
	if strings.Join(got, " ") != want {
		t.Errorf("updates\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if !json.Valid(rec.updates[0].Raw) || !strings.Contains(string(rec.updates[0].Raw), `"title":"Terminal"`) {
		t.Errorf("raw %s", rec.updates[0].Raw)
	}
}

// session/new answering auth_required: the client authenticates with an
// env_var method whose variables are set (or Options.AuthMethod) and
// retries; without a usable method Start fails naming the methods.
func TestAuthentication(t *testing.T) {
	methods := []any{
		map[string]any{"id": "oauth", "name": "Log in"},
		map[string]any{"id": "api-key", "name": "API key", "type": "env_var", "vars": []any{map[string]any{"name": "FAKE_API_KEY"}}},
	}
	script := func(f *fakeAgent) {
		w := f.expect("initialize")
		f.reply(w.ID, map[string]any{"protocolVersion": 1, "authMethods": methods})
		w = f.expect("session/new")
		f.replyError(w.ID, -32000, "Authentication required")
		w, ok := f.tryRecv()
		if !ok || w.Method != "authenticate" {
			return
		}
		var p struct {
			MethodID string `json:"methodId"`
		}
		_ = json.Unmarshal(w.Params, &p)
		if p.MethodID != "api-key" && p.MethodID != "oauth" {
			f.replyError(w.ID, -32602, "bad method")
			return
		}
		f.reply(w.ID, map[string]any{})
		w = f.expect("session/new")
		f.reply(w.ID, map[string]any{"sessionId": "s-auth"})
	}
	t.Run("env_var", func(t *testing.T) {
		c, _, err := startFake(t, Options{Env: []string{"FAKE_API_KEY=k"}}, script)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var ids []string
		for _, m := range c.Info().AuthMethods {
			ids = append(ids, m.ID+":"+m.Type)
		}
		if c.SessionID() != "s-auth" || c.Info().AuthMethod != "api-key" || strings.Join(ids, ",") != "oauth:agent,api-key:env_var" {
			t.Errorf("session %q info %+v", c.SessionID(), c.Info())
		}
	})
	t.Run("configured", func(t *testing.T) {
		c, _, err := startFake(t, Options{Env: []string{}, AuthMethod: "oauth"}, script)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if c.Info().AuthMethod != "oauth" {
			t.Errorf("info %+v", c.Info())
		}
	})
	t.Run("none usable", func(t *testing.T) {
		_, _, err := startFake(t, Options{Env: []string{}}, script)
		var auth *AuthRequiredError
		if !errors.As(err, &auth) || auth.Message != "Authentication required" || len(auth.Methods) != 2 || auth.Step != "session/new" {
			t.Fatalf("err = %#v, want an AuthRequiredError with both methods", err)
		}
		if !strings.Contains(err.Error(), "requires authentication") || !strings.Contains(err.Error(), `"oauth" "api-key"`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("unknown method", func(t *testing.T) {
		_, _, err := startFake(t, Options{Env: []string{}, AuthMethod: "sso"}, script)
		var auth *AuthRequiredError
		if !errors.As(err, &auth) || !strings.Contains(auth.Message, `no method "sso"`) {
			t.Errorf("err = %v, want the agent's methods and the unknown one named", err)
		}
	})
}

// Terminal logins, in ACP's "terminal" type (the agent's own program with
// args) and in the _meta["terminal-auth"] form agents sent before it
// (Copilot CLI 1.0.102 sends this one, with its binary's path).
func TestTerminalAuthMethods(t *testing.T) {
	methods := []any{
		map[string]any{"id": "copilot-login", "name": "Log in with Copilot CLI", "description": "Run `copilot login` in the terminal",
			"_meta": map[string]any{"terminal-auth": map[string]any{"command": "/opt/copilot/copilot", "args": []any{"login"}, "label": "Copilot Login"}}},
		map[string]any{"id": "tui", "name": "Log in", "type": "terminal", "args": []any{"--login"}, "env": map[string]any{"LOGIN_MODE": "tui"}},
	}
	_, _, err := startFake(t, Options{Argv: []string{"/usr/bin/some-agent", "--acp"}, Env: []string{}}, func(f *fakeAgent) {
		w := f.expect("initialize")
		f.reply(w.ID, map[string]any{"protocolVersion": 1, "authMethods": methods, "agentInfo": map[string]any{"name": "some", "title": "Some Agent"}})
		w = f.expect("session/new")
		f.replyError(w.ID, -32000, "Authentication required")
	})
	var auth *AuthRequiredError
	if !errors.As(err, &auth) || len(auth.Methods) != 2 {
		t.Fatalf("err = %v", err)
	}
	got, _ := json.Marshal(auth.Methods)
	want := `[{"id":"copilot-login","name":"Log in with Copilot CLI","description":"Run ` + "`copilot login`" + ` in the terminal","type":"terminal","command":"/opt/copilot/copilot","args":["login"],"label":"Copilot Login"},` +
		`{"id":"tui","name":"Log in","type":"terminal","command":"/usr/bin/some-agent","args":["--login"],"env":{"LOGIN_MODE":"tui"}}]`
	if string(got) != want {
		t.Errorf("methods\n got %s\nwant %s", got, want)
	}
	if !strings.HasPrefix(err.Error(), "acp: Some Agent requires authentication at session/new (Authentication required)") {
		t.Errorf("err = %v", err)
	}
}

// A prompt the agent refuses for want of a login (Claude's adapter with no
// key does, at the first prompt) is an AuthRequiredError, not a failed turn.
func TestPromptNeedsAuthentication(t *testing.T) {
	c, _, err := startFake(t, Options{}, func(f *fakeAgent) {
		f.handshake("s1")
		w := f.expect("session/prompt")
		f.replyError(w.ID, -32000, "Authentication required")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Prompt(context.Background(), "hi")
	var auth *AuthRequiredError
	if !errors.As(err, &auth) || auth.Step != "session/prompt" || auth.Message != "Authentication required" {
		t.Errorf("err = %v, want an AuthRequiredError at session/prompt", err)
	}
}

func TestStartTimeoutAndErrors(t *testing.T) {
	t.Run("silent agent", func(t *testing.T) {
		start := time.Now()
		_, _, err := startFake(t, Options{StartTimeout: 200 * time.Millisecond}, func(f *fakeAgent) {
			f.expect("initialize")
		})
		if err == nil || !strings.Contains(err.Error(), "did not answer initialize within the start timeout (200ms)") {
			t.Errorf("err = %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("session/new fails", func(t *testing.T) {
		_, _, err := startFake(t, Options{}, func(f *fakeAgent) {
			f.initialize()
			w := f.expect("session/new")
			f.replyError(w.ID, -32603, "no model configured")
		})
		if err == nil || !strings.Contains(err.Error(), "session/new") || !strings.Contains(err.Error(), "no model configured") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("protocol version", func(t *testing.T) {
		_, _, err := startFake(t, Options{}, func(f *fakeAgent) {
			w := f.expect("initialize")
			f.reply(w.ID, map[string]any{"protocolVersion": 2})
		})
		if err == nil || !strings.Contains(err.Error(), "protocol version 2") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("exits during start", func(t *testing.T) {
		_, _, err := startFake(t, Options{}, func(f *fakeAgent) {
			f.expect("initialize")
			_, _ = f.stderr.Write([]byte("Error: no API key\n"))
			time.Sleep(50 * time.Millisecond)
			f.exitCode(1)
		})
		if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "exited during initialize") || !strings.Contains(err.Error(), "no API key") {
			t.Errorf("err = %v", err)
		}
	})
}

// Prompt's context ending cancels the turn.
func TestPromptContextCancels(t *testing.T) {
	c, _, err := startFake(t, Options{}, func(f *fakeAgent) {
		f.handshake("s1")
		p := f.expect("session/prompt")
		f.expect("session/cancel")
		f.reply(p.ID, map[string]any{"stopReason": "cancelled"})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	r, err := c.Prompt(ctx, "x")
	if r != "cancelled" || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Prompt = %q, %v", r, err)
	}
}

// Close ends the agent (the fake sees the signal), settles what is pending
// and calls Exited.
func TestCloseEndsAgent(t *testing.T) {
	rec := newRecorder()
	c, _, err := startFake(t, Options{Handler: rec}, func(f *fakeAgent) {
		f.handshake("s1")
		f.expect("session/prompt")
		f.askPermission(1, "s1", "call-1", permissionOptions)
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = c.Prompt(context.Background(), "x") }()
	rec.waitPermission(t, 1)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, "exited", func() bool { return rec.exit != nil })
	if e := c.Exit(); e.Signal != "SIGHUP" || e.Code != -1 {
		t.Errorf("exit %+v", e)
	}
	if ev := strings.Join(rec.events(), " "); ev != "permission:p1 settled:p1:exited exited" {
		t.Errorf("events %s", ev)
	}
	_ = c.Close() // twice is fine
}

// The Handler may call the Client from its callbacks (here: answering
// from Permission, closing from Exited) without deadlocking.
func TestHandlerMayCallClient(t *testing.T) {
	var c *Client
	ready := make(chan struct{})
	exited := make(chan struct{})
	h := HandlerFuncs{
		OnPermission: func(p Permission) {
			<-ready
			if err := c.Answer(p.Key, "allow_always"); err != nil {
				t.Error(err)
			}
		},
		OnExited: func(Exit) {
			_ = c.Close()
			close(exited)
		},
	}
	c, _, err := startFake(t, Options{Handler: h}, func(f *fakeAgent) {
		f.handshake("s1")
		p := f.expect("session/prompt")
		f.askPermission(1, "s1", "call-1", permissionOptions)
		f.recv()
		f.reply(p.ID, map[string]any{"stopReason": "end_turn"})
		f.expect("session/prompt")
		f.exitCode(0)
	})
	if err != nil {
		t.Fatal(err)
	}
	close(ready)
	if r, err := c.Prompt(context.Background(), "x"); err != nil || r != "end_turn" {
		t.Fatalf("Prompt = %q, %v", r, err)
	}
	if _, err := c.Prompt(context.Background(), "y"); !errors.Is(err, ErrExited) {
		t.Errorf("Prompt = %v", err)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("Exited not called")
	}
	if e := c.Exit(); e.Code != 0 || e.Err != nil {
		t.Errorf("exit %+v", e)
	}
}

func TestOutcome(t *testing.T) {
	for in, want := range map[string]string{
		"end_turn": "completed", "cancelled": "interrupted", "refusal": "failed",
		"max_tokens": "failed", "max_turn_requests": "failed", "": "failed", "paused": "unknown",
	} {
		if got := Outcome(in); got != want {
			t.Errorf("Outcome(%q) = %q, want %q", in, got, want)
		}
	}
}

// Mid-turn, an agent asks for a method this client does not have (Qwen
// Code's craft/drainMidTurnQueue) and then sends a 600 KB
// available_commands_update: the first gets method-not-found, the second
// reaches the Handler whole, and the turn goes on to its end.
func TestPassthroughStaysHonest(t *testing.T) {
	rec := newRecorder()
	big := strings.Repeat("x", 600<<10)
	reply := make(chan wire, 1)
	c, _, err := startFake(t, Options{Handler: rec}, func(f *fakeAgent) {
		f.handshake("s1")
		w := f.expect("session/prompt")
		f.request(41, "craft/drainMidTurnQueue", map[string]any{"sessionId": "s1"})
		reply <- f.recv()
		f.update("s1", map[string]any{"sessionUpdate": "available_commands_update",
			"availableCommands": []any{map[string]any{"name": "huge", "description": big}}})
		f.textChunk("s1", "still here")
		f.reply(w.ID, map[string]any{"stopReason": "end_turn"})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stop, err := c.Prompt(context.Background(), "go")
	if err != nil || stop != "end_turn" {
		t.Fatalf("turn ended %q, %v; want end_turn", stop, err)
	}
	if w := <-reply; w.Error == nil || w.Error.Code != -32601 {
		t.Errorf("craft/drainMidTurnQueue answered %s, want method-not-found", w.Line)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var kinds []string
	bigSeen := false
	for _, u := range rec.updates {
		kinds = append(kinds, u.Kind)
		if u.Kind == "available_commands_update" && strings.Contains(string(u.Raw), big) {
			bigSeen = true
		}
	}
	if !bigSeen || strings.Join(kinds, ",") != "available_commands_update,agent_message_chunk" {
		t.Errorf("updates %v (600 KB one whole: %v)", kinds, bigSeen)
	}
}

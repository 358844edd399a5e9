package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// stepperScript asks "Step 1? [y/N]", "Step 2? [y/N]", … one after the
// other: every answer typed brings a new prompt, so a new blocked state.
const stepperScript = `i=0; while :; do i=$((i+1)); read -r -p "Step $i? [y/N] " a; done`

// Bad input over the real binary: every malformed frame, bad message, bad
// parameter and impossible request is answered with a JSON-RPC error whose
// code and message name the problem, and after each one agentd still
// serves — a session started at the beginning still takes input and its
// state still reaches the editor. Nothing leaks: at the end agentd has no
// child but that session and its keeper, holds no more files than before,
// and exits cleanly when stdin closes. (rpc/server_test.go has the same
// kind of table in process; this one goes through the built program.)
func TestBadInputOverRealBinary(t *testing.T) {
	badInput(t, startRaw(t), false)
}

// The same bad input through the forwarder (what editors start): it passes
// every byte on as it came, so the daemon answers each as above, and it
// keeps serving. At the end the forwarder exits 0 on EOF and the sessions
// live on in the daemon.
func TestBadInputThroughTheForwarder(t *testing.T) {
	d := newDaemonEnv(t)
	badInput(t, startRawCmd(t, os.Stderr, []string{"--stdio", "--log", d.log}, d.env, d.log), true)
}

func badInput(t *testing.T, a *rawAgentd, forwarded bool) {
	var init struct {
		Daemon struct{ Pid int } `json:"daemon"`
	}
	a.mustCall("initialize", map[string]any{"clientInfo": map[string]string{"name": "badinput-test"}}, &init)
	if forwarded {
		if init.Daemon.Pid == a.cmd.Process.Pid || init.Daemon.Pid == 0 {
			t.Fatalf("initialize through the forwarder names daemon pid %d", init.Daemon.Pid)
		}
		a.host = init.Daemon.Pid
	}
	from := 0

	// The long-lived session: a y/n asker that moves on with each answer.
	var live spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", stepperScript}, "cwd": t.TempDir(), "cols": 80, "rows": 24}, &live)
	step := 1
	blocked := a.waitState(live.SessionID, &from, 20*time.Second, "blocked on Step 1?", func(s stateNote) bool {
		return s.State == "blocked" && s.Prompt != nil && s.Prompt.Question == "Step 1?"
	})
	// A second live session of another kind: the demo agent.
	var demo spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{agentdBinary(t), "demo-agent"}, "cwd": t.TempDir(), "cols": 100, "rows": 30}, &demo)
	a.waitState(demo.SessionID, &from, 20*time.Second, "idle", func(s stateNote) bool { return s.State == "idle" })

	// A session that has exited, for the requests that need one.
	var gone spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", "exit 3"}, "cwd": t.TempDir()}, &gone)
	a.waitState(gone.SessionID, &from, 20*time.Second, "exited", func(s stateNote) bool { return s.State == "exited" })
	a.waitFor("session/exited of "+gone.SessionID, &from, 20*time.Second, func(m rawMsg) bool {
		return m.Method == "session/exited" && strings.Contains(string(m.Params), `"`+gone.SessionID+`"`)
	})
	time.Sleep(200 * time.Millisecond) // let agentd close what the exited session held
	baseFDs := openFDCount(t, a.pid())

	notExec := filepath.Join(t.TempDir(), "agent.txt")
	if err := os.WriteFile(notExec, []byte("not a program\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := `{"jsonrpc":"2.0","id":900,"method":"session/list","params":{"pad":"` + strings.Repeat("x", 8<<20) + `"}}`
	deep := `{"jsonrpc":"2.0","id":901,"method":"session/list","params":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`
	req := func(id int, method, params string) string {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q`, id, method)
		if params != "" {
			body += `,"params":` + params
		}
		return frameOf(body + "}")
	}
	notif := func(method, params string) string {
		return frameOf(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params))
	}
	sid := func(s spawned) string { return fmt.Sprintf("%q", s.SessionID) }

	type reply struct {
		id   string // "null", or the request's id
		code int
		msg  string // the message must contain this
	}
	tests := []struct {
		name string
		raw  func() string
		want []reply // in order; none: nothing may be answered
	}{
		// Framing.
		{"body not JSON", func() string { return frameOf(`{"jsonrpc":"2.0","id":1,"method":`) },
			[]reply{{"null", -32700, "not valid JSON"}}},
		{"empty body", func() string { return "Content-Length: 0\r\n\r\n" },
			[]reply{{"null", -32700, "not valid JSON"}}},
		{"Content-Length not a number", func() string { return "Content-Length: lots\r\n\r\n" },
			[]reply{{"null", -32700, `bad Content-Length "lots"`}}},
		{"Content-Length negative", func() string { return "Content-Length: -5\r\n\r\n" },
			[]reply{{"null", -32700, `bad Content-Length "-5"`}}},
		{"no Content-Length header", func() string { return "Content-Type: application/json\r\n\r\n" },
			[]reply{{"null", -32700, "without a Content-Length header"}}},
		{"header line without a colon", func() string { return "hello agentd\r\n" },
			[]reply{{"null", -32700, `malformed header line "hello agentd"`}}},
		// The length cuts the body: its head is not JSON, its tail is read
		// as a header line of a message without a length.
		{"Content-Length shorter than the body", func() string {
			return "Content-Length: 10\r\n\r\n" + `{"jsonrpc":"2.0","id":2,"method":"session/list"}` + "\r\n\r\n"
		}, []reply{{"null", -32700, "not valid JSON"}, {"null", -32700, "without a Content-Length header"}}},
		{"message over the 8 MiB limit", func() string { return frameOf(big) },
			[]reply{{"null", -32600, fmt.Sprintf("message of %d bytes is over the limit of %d", len(big), 8<<20)}}},
		{"JSON nested 20000 deep", func() string { return frameOf(deep) },
			[]reply{{"null", -32700, "exceeded max depth"}}},
		// Messages.
		{"binary garbage", func() string { return "\x00\xff\xfe\x1b[2J\r\n\r\n" },
			[]reply{{"null", -32700, "malformed header line"}}},
		{"JSON that is not an object", func() string { return frameOf(`"session/list"`) },
			[]reply{{"null", -32600, "invalid request: a message must be a JSON object"}}},
		{"batch", func() string { return frameOf(`[{"jsonrpc":"2.0","id":3,"method":"session/list"}]`) },
			[]reply{{"null", -32600, "invalid request: batches (a JSON array) are not supported"}}},
		{"id an object", func() string { return frameOf(`{"jsonrpc":"2.0","id":{"n":3},"method":"session/list"}`) },
			[]reply{{"null", -32600, "unexpected ID type"}}},
		{"neither request nor response", func() string { return frameOf(`{"jsonrpc":"2.0","id":4}`) },
			[]reply{{"4", -32600, "invalid request"}}},
		{"method of the wrong type", func() string { return frameOf(`{"jsonrpc":"2.0","id":5,"method":5}`) },
			[]reply{{"5", -32600, "invalid request"}}},
		{"unknown method", func() string { return req(6, "session/dance", `{}`) },
			[]reply{{"6", -32601, `method "session/dance" not found`}}},
		{"unknown method as a notification", func() string { return notif("session/dance", `{}`) }, nil},
		{"bad params in a notification", func() string { return notif("session/input", `{"sessionId":7}`) }, nil},
		// Parameters.
		{"params missing", func() string { return req(7, "session/read", "") },
			[]reply{{"7", -32602, "session/read: params are required"}}},
		{"params not an object", func() string { return req(8, "session/read", `"s1"`) },
			[]reply{{"8", -32602, "session/read: params: want an object"}}},
		{"sessionId missing", func() string { return req(9, "session/input", `{"data":"x"}`) },
			[]reply{{"9", -32602, "session/input: params.sessionId is required"}}},
		{"sessionId a number", func() string { return req(10, "session/read", `{"sessionId":1}`) },
			[]reply{{"10", -32602, "session/read: params.sessionId: want string, got number"}}},
		{"argv a string", func() string { return req(11, "session/spawn", `{"argv":"bash","cwd":"/"}`) },
			[]reply{{"11", -32602, "session/spawn: params.argv: want []string, got string"}}},
		{"cols a string", func() string {
			return req(12, "session/resize", `{"sessionId":`+sid(live)+`,"cols":"wide","rows":10}`)
		}, []reply{{"12", -32602, "session/resize: params.cols: want int, got string"}}},
		{"input data a number", func() string { return req(13, "session/input", `{"sessionId":`+sid(live)+`,"data":42}`) },
			[]reply{{"13", -32602, "session/input: params.data: want string, got number"}}},
		{"unknown protocol", func() string { return req(14, "session/spawn", `{"argv":["true"],"cwd":"/","protocol":"telnet"}`) },
			[]reply{{"14", -32602, `params.protocol "telnet"`}}},
		{"unknown signal", func() string { return req(15, "session/kill", `{"sessionId":`+sid(live)+`,"signal":"SIGFOO"}`) },
			[]reply{{"15", -32602, `unknown signal "SIGFOO"`}}},
		// Sessions that are not there.
		{"unknown session: read", func() string { return req(16, "session/read", `{"sessionId":"s999"}`) },
			[]reply{{"16", -32010, `no session "s999"`}}},
		{"unknown session: input", func() string { return req(17, "session/input", `{"sessionId":"s999","data":"y"}`) },
			[]reply{{"17", -32010, `no session "s999"`}}},
		{"unknown session: kill", func() string { return req(18, "session/kill", `{"sessionId":"nope"}`) },
			[]reply{{"18", -32010, `no session "nope"`}}},
		{"unknown session: answer", func() string {
			return req(19, "runtime_answer", `{"sessionId":"s999","promptId":"p","optionId":"1"}`)
		}, []reply{{"19", -32010, `no session "s999"`}}},
		// Spawns that cannot start.
		{"spawn a missing program", func() string { return req(20, "session/spawn", `{"argv":["no-such-agent-xyz"],"cwd":"/"}`) },
			[]reply{{"20", -32012, `program "no-such-agent-xyz" not found`}}},
		{"spawn a missing path", func() string { return req(21, "session/spawn", `{"argv":["/no/such/agent"],"cwd":"/"}`) },
			[]reply{{"21", -32012, `program "/no/such/agent" not found`}}},
		{"spawn a file that is not executable", func() string { return req(22, "session/spawn", fmt.Sprintf(`{"argv":[%q],"cwd":"/"}`, notExec)) },
			[]reply{{"22", -32012, fmt.Sprintf("program %q is not executable", notExec)}}},
		{"spawn into a missing cwd", func() string { return req(23, "session/spawn", `{"argv":["true"],"cwd":"/no/such/dir"}`) },
			[]reply{{"23", -32012, `cwd "/no/such/dir" is not a directory`}}},
		{"spawn with empty argv", func() string { return req(24, "session/spawn", `{"argv":[],"cwd":"/"}`) },
			[]reply{{"24", -32012, "argv is empty"}}},
		{"spawn an unknown agent", func() string { return req(25, "session/spawn", `{"argv":["true"],"cwd":"/","agent":"nosuch"}`) },
			[]reply{{"25", -32012, `unknown agent "nosuch"`}}},
		{"spawn at an absurd size", func() string { return req(26, "session/spawn", `{"argv":["true"],"cwd":"/","cols":100000,"rows":0}`) },
			[]reply{{"26", -32012, "cols and rows must be between 2 and 1000"}}},
		// Sizes.
		{"resize to 0x0", func() string { return req(27, "session/resize", `{"sessionId":`+sid(live)+`,"cols":0,"rows":0}`) },
			[]reply{{"27", -32602, "size 0x0: cols and rows must be between 2 and 1000"}}},
		{"resize negative", func() string { return req(28, "session/resize", `{"sessionId":`+sid(live)+`,"cols":-1,"rows":24}`) },
			[]reply{{"28", -32602, "size -1x24: cols and rows must be between 2 and 1000"}}},
		{"resize absurd", func() string {
			return req(29, "session/resize", `{"sessionId":`+sid(live)+`,"cols":100000,"rows":100000}`)
		}, []reply{{"29", -32602, "size 100000x100000: cols and rows must be between 2 and 1000"}}},
		{"resize beyond int", func() string {
			return req(30, "session/resize", `{"sessionId":`+sid(live)+`,"cols":1e30,"rows":24}`)
		}, []reply{{"30", -32602, "session/resize: params.cols: want int, got number 1e30"}}},
		// An exited session.
		{"input to an exited session", func() string { return req(31, "session/input", `{"sessionId":`+sid(gone)+`,"data":"y\r"}`) },
			[]reply{{"31", -32011, "the session has exited"}}},
		{"resize an exited session", func() string {
			return req(32, "session/resize", `{"sessionId":`+sid(gone)+`,"cols":80,"rows":24}`)
		}, []reply{{"32", -32011, "the session has exited"}}},
		{"kill an exited session", func() string { return req(33, "session/kill", `{"sessionId":`+sid(gone)+`}`) },
			[]reply{{"33", -32011, "the session has exited"}}},
		{"send to an exited session", func() string {
			return req(34, "runtime_send", `{"sessionId":`+sid(gone)+`,"text":"hi","submit":true}`)
		}, []reply{{"34", -32011, "the session has exited"}}},
		{"answer an exited session", func() string {
			return req(35, "runtime_answer", `{"sessionId":`+sid(gone)+`,"promptId":"p","optionId":"1"}`)
		}, []reply{{"35", -32011, "the session has exited"}}},
		// Answers that do not fit.
		{"answer with promptId a number", func() string {
			return req(36, "runtime_answer", `{"sessionId":`+sid(live)+`,"promptId":5,"optionId":"1"}`)
		}, []reply{{"36", -32602, "runtime_answer: params.promptId: want string, got number"}}},
		{"answer with optionId a number", func() string {
			return req(37, "runtime_answer", fmt.Sprintf(`{"sessionId":%s,"promptId":%q,"optionId":1}`, sid(live), blocked.Prompt.PromptID))
		}, []reply{{"37", -32602, "runtime_answer: params.optionId: want string, got number"}}},
		{"answer with an object", func() string {
			return req(38, "runtime_answer", fmt.Sprintf(`{"sessionId":%s,"promptId":%q,"optionId":{"id":"1"}}`, sid(live), blocked.Prompt.PromptID))
		}, []reply{{"38", -32602, "runtime_answer: params.optionId: want string, got object"}}},
		{"answer without promptId", func() string { return req(39, "runtime_answer", `{"sessionId":`+sid(live)+`,"optionId":"1"}`) },
			[]reply{{"39", -32602, "runtime_answer: params.promptId is required"}}},
		{"answer without option or text", func() string {
			return req(40, "runtime_answer", fmt.Sprintf(`{"sessionId":%s,"promptId":%q}`, sid(live), blocked.Prompt.PromptID))
		}, []reply{{"40", -32602, "runtime_answer: give params.optionId or params.text"}}},
		{"answer a prompt that is not on screen", func() string {
			return req(41, "runtime_answer", `{"sessionId":`+sid(live)+`,"promptId":"0000000000000000","optionId":"1"}`)
		}, []reply{{"41", -32021, "is no longer the one on screen"}}},
		{"answer with an option the prompt lacks", func() string {
			return req(42, "runtime_answer", fmt.Sprintf(`{"sessionId":%s,"promptId":%q,"optionId":"9"}`, sid(live), blocked.Prompt.PromptID))
		}, []reply{{"42", -32022, "the prompt has no such option"}}},
		{"send while blocked", func() string {
			return req(43, "runtime_send", `{"sessionId":`+sid(live)+`,"text":"rm -rf /","submit":true}`)
		}, []reply{{"43", -32020, "blocked on a prompt"}}},
		{"ACP prompt to a PTY session", func() string { return req(44, "session/prompt", `{"sessionId":`+sid(live)+`,"text":"hi"}`) },
			[]reply{{"44", -32030, "PTY session"}}},
	}

	nullReplies := 0
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a.t = t
			mark := len(a.messages())
			a.write(tc.raw())
			// A request behind the bad input: its reply comes after every
			// reply to the bad input (requests are answered in order).
			check := a.request("session/list", nil)
			checkReply := a.reply(check)
			// Framing errors (id null) are answered in stream order, before
			// the request behind them; other replies may come later (spawn
			// and the runtime_ methods run concurrently): wait for those by id.
			var got []rawMsg
			for _, m := range a.messages()[mark:] {
				if m.isReply() && string(m.ID) == fmt.Sprint(check) {
					break
				}
				if m.isReply() && string(m.ID) == "null" {
					got = append(got, m)
				}
			}
			nulls := 0
			for _, w := range tc.want {
				if w.id == "null" {
					nulls++
				} else {
					n, _ := strconv.Atoi(w.id)
					got = append(got, a.reply(n))
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got replies %v, want %+v", describe(got), tc.want)
			}
			nullReplies += nulls
			for j, w := range tc.want {
				m := got[j]
				if string(m.ID) != w.id || m.Error == nil || m.Error.Code != w.code || !strings.Contains(m.Error.Message, w.msg) {
					t.Fatalf("reply %d: %s, want id %s error %d containing %q", j, describe([]rawMsg{m}), w.id, w.code, w.msg)
				}
			}
			t.Logf("answered: %s", describe(got))
			// Still serving: the list names the live sessions, running.
			var list struct {
				Sessions []spawned `json:"sessions"`
			}
			if checkReply.Error != nil || json.Unmarshal(checkReply.Result, &list) != nil {
				t.Fatalf("session/list after %q: %s", tc.name, describe([]rawMsg{checkReply}))
			}
			states := map[string]string{}
			for _, s := range list.Sessions {
				states[s.SessionID] = s.State
			}
			if states[live.SessionID] != "blocked" || states[demo.SessionID] != "idle" || states[gone.SessionID] != "exited" {
				t.Fatalf("after %q the sessions are %v", tc.name, states)
			}
			// Still serving: typed input reaches the program and its new
			// state reaches the editor.
			a.mustCall("session/input", map[string]any{"sessionId": live.SessionID, "data": "y\r"}, nil)
			step++
			q := fmt.Sprintf("Step %d?", step)
			blocked = a.waitState(live.SessionID, &from, 20*time.Second, "blocked on "+q, func(s stateNote) bool {
				return s.State == "blocked" && s.Prompt != nil && s.Prompt.Question == q
			})
		})
	}
	a.t = t
	t.Logf("%d bad-input cases, %d replies with id null", len(tests), nullReplies)
	// No reply came that was not expected (notifications get none).
	want := 0
	for _, tc := range tests {
		want += len(tc.want)
	}
	if got := badReplies(a.messages()); got != want {
		t.Errorf("%d replies to the bad input, want %d", got, want)
	}

	// The demo agent still works a whole turn: blocked, answered, done.
	a.mustCall("runtime_send", map[string]any{"sessionId": demo.SessionID, "text": "a task", "submit": true}, nil)
	db := a.waitState(demo.SessionID, &from, 30*time.Second, "blocked with options", func(s stateNote) bool {
		return s.State == "blocked" && s.Prompt != nil && len(s.Prompt.Options) > 0
	})
	a.mustCall("runtime_answer", map[string]any{"sessionId": demo.SessionID, "promptId": db.Prompt.PromptID, "optionId": "1"}, nil)
	a.waitState(demo.SessionID, &from, 30*time.Second, "done", func(s stateNote) bool { return s.State == "done" })

	// Nothing leaked: agentd's children are the two live sessions and its
	// keeper (no process of a failed spawn, no zombie of the exited one),
	// and it holds no more files than before the table.
	live2, zombies := liveChildren(a.pid())
	var others []string
	for _, p := range live2 {
		if p != live.Pid && p != demo.Pid && !strings.HasSuffix(cmdlineOf(p), " keeper") {
			others = append(others, fmt.Sprintf("%d (%s)", p, cmdlineOf(p)))
		}
	}
	if len(others) > 0 || len(zombies) > 0 || len(live2) != 3 {
		t.Errorf("agentd's children: %v (unexpected %v, zombies %v); want sessions %d, %d and the keeper", live2, others, zombies, live.Pid, demo.Pid)
	}
	if fds := openFDCount(t, a.pid()); fds > baseFDs {
		t.Errorf("agentd holds %d files after the table, %d before", fds, baseFDs)
	}
	// stdin closes: agentd exits 0; privately it ends both sessions first,
	// through the forwarder they live on in the daemon.
	_ = a.in.Close()
	select {
	case <-a.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("agentd did not exit within 20s of stdin closing")
	}
	if a.waitErr != nil {
		t.Errorf("agentd exited with %v, want status 0", a.waitErr)
	}
	if forwarded {
		for _, p := range []int{live.Pid, demo.Pid} {
			if !alive(p) {
				t.Errorf("session pid %d ended with the forwarder", p)
			}
		}
		return
	}
	waitGone(t, append([]int{live.Pid, demo.Pid}, live2...), 10*time.Second)
}

// badReplies counts the replies that are not to the test's own requests.
func badReplies(ms []rawMsg) int {
	n := 0
	for _, m := range ms {
		if m.isReply() && !ownID(m.ID) {
			n++
		}
	}
	return n
}

// ownID: the test's own requests (session/list, session/input) have ids
// from 1000 on; the table's bad requests have smaller ones.
func ownID(id json.RawMessage) bool {
	var n int
	return json.Unmarshal(id, &n) == nil && n >= 1000
}

func describe(ms []rawMsg) []string {
	var out []string
	for _, m := range ms {
		if m.Error != nil {
			out = append(out, fmt.Sprintf("id %s error %d %q", m.ID, m.Error.Code, m.Error.Message))
		} else {
			out = append(out, fmt.Sprintf("id %s method %q result %.200s", m.ID, m.Method, m.Result))
		}
	}
	return out
}

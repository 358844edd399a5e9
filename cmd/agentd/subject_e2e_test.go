package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/fixtures/fakemodel"
	"github.com/agentd/agentd/fixtures/lab"
)

// TestAnswerForOnePromptNeverTakesTheNext runs the real Claude Code through
// two permission prompts in a row that read exactly the same: the same
// question, the same options, the same command. The first is answered in
// the terminal, as a person at the keyboard would; then an answer carrying
// the first prompt's promptId arrives late (a phone, a second window). It
// must be refused as stale, naming what it was for and what is on screen,
// and nothing may be typed: the model is never told the second command ran.
func TestAnswerForOnePromptNeverTakesTheNext(t *testing.T) {
	const cmd = "touch twice.txt"
	// The model asks for the same command twice, then says it is done:
	// each request carries one more tool result than the last.
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{Prompt: "do it twice", ReplyFor: func(r fakemodel.Request) fakemodel.Reply {
		if strings.Count(string(r.Body), `"tool_result"`) < 2 {
			return fakemodel.Reply{Text: "Running it.", Tool: lab.ClaudeBash(cmd, "Touch the file")}
		}
		return fakemodel.Reply{Text: "Done twice."}
	}}}}
	c := startAgentd(t)
	_, s, from, srv := spawnClaude(t, c, script, lab.ClaudeOptions{})
	id := s.SessionID
	defer func() {
		if t.Failed() {
			t.Logf("states %s\nscreen:\n%s", c.stateTrail(id), c.screen(id))
		}
	}()
	c.mustCall("runtime_send", map[string]any{"sessionId": id, "text": "do it twice", "submit": true}, nil)
	first := c.waitPrompt(id, &from, 90*time.Second)
	if sub := first.Prompt.Subject; sub == nil || sub.Kind != "command" || sub.Text != cmd {
		t.Fatalf("first prompt's subject %+v, want the command %q", sub, cmd)
	}
	// A person answers it in the terminal: "1", Yes, once they have read
	// it. Claude Code lets keys go by for its first moments on screen
	// (typed at once, "1" was lost every time; claude.toml's settle says
	// how long); under load it may still, and the person sees the menu
	// stay and presses "1" again.
	time.Sleep(300 * time.Millisecond) // claude.toml's settle for this menu
	for try := 1; ; try++ {
		c.mustCall("session/input", map[string]any{"sessionId": id, "data": "1"}, nil)
		if c.awaitPromptLeft(id, first.Prompt.PromptID, &from, 30*time.Second) {
			break
		}
		if try == 2 {
			t.Fatalf("the first prompt stayed after \"1\" was typed twice")
		}
		noteRetry(t, "the first prompt was still there 30 s after \"1\" was typed; typed it again")
	}
	second := c.waitPrompt(id, &from, 90*time.Second)
	if second.Prompt.PromptID == first.Prompt.PromptID {
		t.Fatalf("the prompt shown again after it was answered kept promptId %s: a late answer to the first would approve the second", first.Prompt.PromptID)
	}
	if second.Prompt.Question != first.Prompt.Question || !sameLabels(promptLabels(second), promptLabels(first)) ||
		second.Prompt.Subject == nil || *second.Prompt.Subject != *first.Prompt.Subject {
		t.Fatalf("the second prompt reads otherwise than the first: %+v, then %+v; the test wants two that read the same", first.Prompt, second.Prompt)
	}
	err := c.call("runtime_answer", map[string]any{"sessionId": id, "promptId": first.Prompt.PromptID, "optionId": optionByLabel(t, first, "Yes")}, nil)
	if rpcCode(err) != -32021 {
		t.Fatalf("a late answer to the first prompt: %v, want refused as stale (-32021)", err)
	}
	var data struct {
		Prompt struct {
			PromptID string `json:"promptId"`
		} `json:"prompt"`
	}
	if je, ok := err.(*jsonrpc2.Error); !ok || je.Data == nil || json.Unmarshal(*je.Data, &data) != nil || data.Prompt.PromptID != second.Prompt.PromptID {
		t.Errorf("the refusal's data names prompt %q, want the one on screen, %s", data.Prompt.PromptID, second.Prompt.PromptID)
	}
	if msg := err.Error(); !strings.Contains(msg, first.Prompt.PromptID) || !strings.Contains(msg, second.Prompt.PromptID) || !strings.Contains(msg, cmd) {
		t.Errorf("the refusal %q does not name both prompts and what they approve", msg)
	}
	// Refuse the second where it is on screen: the turn ends interrupted,
	// and had the late answer typed "1", the model would have been sent the
	// second command's result.
	c.mustCall("runtime_answer", map[string]any{"sessionId": id, "promptId": second.Prompt.PromptID, "optionId": optionByLabel(t, second, "No")}, nil)
	if done := c.waitState(id, "done", &from, 60*time.Second); done.Outcome != "interrupted" {
		t.Errorf("after No: done %q (%s), want interrupted", done.Outcome, done.Reason)
	}
	results := 0
	for _, r := range srv.Requests() {
		if r.ToolResult {
			results++
		}
	}
	if results != 1 {
		t.Fatalf("the model was sent %d tool results, want 1: the late answer approved the second command", results)
	}
}

func sameLabels(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// TestACPEditSubjectIsItsDiff runs Claude Code over ACP (claude-agent-acp,
// in the mode that asks first) through a file write: the permission's tool
// call carries the change, and the prompt's subject is the file and the
// diff a person approves.
func TestACPEditSubjectIsItsDiff(t *testing.T) {
	bin := requireAgent(t, "claude-agent-acp")
	d, err := lab.NewDirs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := d.Work + "/notes.txt"
	input, _ := json.Marshal(map[string]string{"file_path": path, "content": "first line\nsecond line\n"})
	script := &fakemodel.Script{Rules: []fakemodel.Rule{{Prompt: "write the notes",
		Reply: fakemodel.Reply{Tool: &fakemodel.ToolCall{Name: "Write", Input: string(input)}}, AfterTool: fakemodel.Reply{Text: "Wrote them."}}}}
	l, _, err := lab.ClaudeAgentACP(bin, d, script, lab.ClaudeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Cleanup)
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": envMap(l.Env, lab.ClaudeUnset...), "protocol": "acp", "agent": "claude-agent-acp"}, &s)
	from := 0
	c.waitState(s.SessionID, "idle", &from, 60*time.Second)
	c.mustCall("session/prompt", map[string]any{"sessionId": s.SessionID, "text": "please write the notes"}, nil)
	b := c.waitPrompt(s.SessionID, &from, 90*time.Second)
	sub := b.Prompt.Subject
	if sub == nil || sub.Kind != "write" || sub.Text != path || !strings.Contains(sub.Detail, "+first line\n+second line") {
		t.Fatalf("subject %+v, want a write of %s with the lines it adds", sub, path)
	}
	t.Logf("asked %q about %s %s:\n%s", b.Prompt.Question, sub.Kind, sub.Text, sub.Detail)
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
}

// TestPromptIDStableAcrossResize: a prompt keeps its promptId while it stays
// on screen, whatever the terminal's size: the demo agent draws its
// command and a label again, wrapped at another width, and an answer with
// the promptId from before the resize still goes through.
func TestPromptIDStableAcrossResize(t *testing.T) {
	const cmd = "git commit -am 'a message long enough to wrap on a narrow terminal'"
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{agentdBinary(t), "demo-agent"}, "cwd": t.TempDir(), "cols": 100, "rows": 30}, &s)
	from := 0
	c.waitState(s.SessionID, "idle", &from, 20*time.Second)
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "please run " + cmd, "submit": true}, nil)
	b := c.waitPrompt(s.SessionID, &from, 30*time.Second)
	if b.Prompt.Subject == nil || b.Prompt.Subject.Text != cmd {
		t.Fatalf("subject %+v, want the command %q", b.Prompt.Subject, cmd)
	}
	c.mustCall("session/resize", map[string]any{"sessionId": s.SessionID, "cols": 44, "rows": 22}, nil)
	// The agent drew its prompt again at 44 columns: the command's rows and
	// the last option's label wrapped.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var r struct{ Rows []string }
		c.mustCall("session/read", map[string]any{"sessionId": s.SessionID}, &r)
		text := strings.Join(r.Rows, "\n")
		if strings.Contains(text, "\n    wrap on a narrow terminal'") && strings.Contains(text, "Do you want to proceed?") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the prompt was not drawn again at 44 columns within 30 s; screen:\n%s", text)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var now string
	for _, l := range c.list().Sessions {
		if l.SessionID == s.SessionID && l.Prompt != nil {
			now = l.Prompt.PromptID
		}
	}
	if now != b.Prompt.PromptID {
		t.Fatalf("after a resize the prompt's id is %q, want %s as before: an answer in flight would be refused; states %s", now, b.Prompt.PromptID, c.stateTrail(s.SessionID))
	}
	var res struct{ State string }
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": "3"}, &res)
	if res.State == "blocked" {
		t.Fatalf("still blocked after answering with the promptId from before the resize")
	}
	// Nothing was told between the prompt and the answer: the screen as
	// the resize cut it, before the agent drew again, is not the agent's
	// word. Told, it is a blocked on another promptId and back (an editor
	// that connected after the prompt pops a notice for it, and an answer
	// sent in between is refused).
	after := c.waitStates(s.SessionID, []string{"working", "idle", "done", "error", "exited"}, &from, 30*time.Second)
	if trail := c.states(s.SessionID); strings.Count(strings.Join(trail, " "), "blocked(") != 1 {
		t.Fatalf("states %s (%s after the answer); want blocked told once, from the prompt until its answer", trail, after.State)
	}
}

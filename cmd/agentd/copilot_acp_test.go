package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/fixtures/fakemodel"
	"github.com/agentd/agentd/fixtures/lab"
)

// github/copilot-cli#845 reports that Copilot over ACP may run tools
// without asking the client (no session/request_permission). This drives
// the pinned Copilot through each kind of tool it has, in turn: a shell
// command that changes something, creating a file, editing it, reading it,
// and a read-only command. The pinned version asks before every one but
// reading a file inside the work folder (docs/agents.md); a release that
// stops asking fails here.
func TestCopilotACPWhichToolsAsk(t *testing.T) {
	bin := requireAgent(t, "copilot")
	d := labDirs(t)
	notes := filepath.Join(d.Work, "notes.txt")
	turns := []struct {
		name string
		tool *fakemodel.ToolCall
	}{
		{"shell", lab.CopilotBash("touch made.txt", "Create made.txt")},
		{"create", &fakemodel.ToolCall{Name: "create", Input: fmt.Sprintf(`{"path":%q,"file_text":"hello\n"}`, notes)}},
		{"edit", &fakemodel.ToolCall{Name: "edit", Input: fmt.Sprintf(`{"path":%q,"old_str":"hello","new_str":"goodbye"}`, notes)}},
		{"view", &fakemodel.ToolCall{Name: "view", Input: fmt.Sprintf(`{"path":%q}`, notes)}},
		{"read-only shell", lab.CopilotBash("ls", "List the folder")},
	}
	script := &fakemodel.Script{}
	for _, tu := range turns {
		script.Rules = append(script.Rules, fakemodel.Rule{
			Prompt:    "the " + tu.name + " turn",
			Reply:     fakemodel.Reply{Tool: tu.tool},
			AfterTool: fakemodel.Reply{Text: "Done with the " + tu.name + " turn."},
		})
	}
	l, _, err := lab.Copilot(bin, d, script, "--acp")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()

	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": envMap(l.Env), "protocol": "acp", "agent": "copilot-acp"}, &s)
	from := 0
	c.waitState(s.SessionID, "idle", &from, 60*time.Second)
	asked := map[string]bool{}
	for _, tu := range turns {
		c.mustCall("session/prompt", map[string]any{"sessionId": s.SessionID, "text": "please do the " + tu.name + " turn"}, nil)
		c.waitState(s.SessionID, "working", &from, 20*time.Second)
		// Blocked or done, whichever comes first.
		next := c.waitStates(s.SessionID, []string{"blocked", "done"}, &from, 60*time.Second)
		if next.State == "blocked" {
			asked[tu.name] = true
			if next.Prompt == nil || len(next.Prompt.Options) == 0 {
				t.Fatalf("%s: blocked without options: %+v", tu.name, next)
			}
			c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": next.Prompt.PromptID, "optionId": "allow_once"}, nil)
			next = c.waitState(s.SessionID, "done", &from, 60*time.Second)
		}
		t.Logf("%s: asked %v; turn ended %s", tu.name, asked[tu.name], next.Outcome)
		c.mustCall("session/seen", map[string]any{"sessionId": s.SessionID}, nil)
		c.waitState(s.SessionID, "idle", &from, 10*time.Second)
	}
	if b, err := os.ReadFile(notes); err != nil || !strings.Contains(string(b), "goodbye") {
		t.Errorf("notes.txt after the edit turn: %q, %v", b, err)
	}
	want := map[string]bool{"shell": true, "create": true, "edit": true, "read-only shell": true}
	for _, tu := range turns {
		if asked[tu.name] != want[tu.name] {
			t.Errorf("%s: asked %v, want %v", tu.name, asked[tu.name], want[tu.name])
		}
	}
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
}

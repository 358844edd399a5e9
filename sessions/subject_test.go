package sessions

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/acp"
	"github.com/agentd/agentd/detect"
)

// A structured source's tool call becomes the subject a person approves,
// whatever the agent names its input's fields.
func TestToolCallSubject(t *testing.T) {
	long := strings.Repeat("a", 400)
	for _, c := range []struct {
		name string
		tc   toolCall
		want detect.Subject
	}{
		{"claude Bash", toolCall{name: "Bash", input: json.RawMessage(`{"command":"touch first.txt","description":"Create file"}`)},
			detect.Subject{Kind: "command", Text: "touch first.txt"}},
		{"codex argv", toolCall{kind: "execute", input: json.RawMessage(`{"command":["bash","-lc","touch a.txt"]}`)},
			detect.Subject{Kind: "command", Text: "bash -lc touch a.txt"}},
		{"multi-line script", toolCall{input: json.RawMessage(`{"command":"set -e\nmake test"}`)},
			detect.Subject{Kind: "command", Text: "set -e make test", Detail: "set -e\nmake test"}},
		{"long", toolCall{input: json.RawMessage(`{"command":"` + long + `"}`)},
			detect.Subject{Kind: "command", Text: strings.Repeat("a", detect.MaxSubjectText-1) + "…", Truncated: true}},
		{"claude Edit", toolCall{name: "Edit", input: json.RawMessage(`{"file_path":"/w/a.go","old_string":"x := 1","new_string":"x := 2"}`)},
			detect.Subject{Kind: "edit", Text: "/w/a.go", Detail: "--- /w/a.go\n+++ /w/a.go\n@@ -1 +1 @@\n-x := 1\n+x := 2\n"}},
		{"acp diff", toolCall{kind: "edit", title: "Edit a.txt", diffs: []acp.Diff{{Path: "/w/a.txt", OldText: "one\n", NewText: "two\n"}}},
			detect.Subject{Kind: "edit", Text: "/w/a.txt", Detail: "--- /w/a.txt\n+++ /w/a.txt\n@@ -1 +1 @@\n-one\n+two\n"}},
		{"write", toolCall{name: "Write", input: json.RawMessage(`{"file_path":"/w/n.txt","content":"hi\n"}`)},
			detect.Subject{Kind: "write", Text: "/w/n.txt", Detail: "--- /dev/null\n+++ /w/n.txt\n@@ -0,0 +1 @@\n+hi\n"}},
		{"fetch", toolCall{input: json.RawMessage(`{"url":"https://example.com/x","prompt":"summarize"}`)},
			detect.Subject{Kind: "fetch", Text: "https://example.com/x", Detail: "summarize"}},
		{"read", toolCall{kind: "read", input: json.RawMessage(`{"absolute_path":"/etc/hostname"}`)},
			detect.Subject{Kind: "read", Text: "/etc/hostname"}},
		{"only locations", toolCall{kind: "read", input: json.RawMessage(`{}`), paths: []string{"/w/a", "/w/b"}},
			detect.Subject{Kind: "read", Text: "/w/a /w/b"}},
		{"mcp tool", toolCall{name: "mcp__github__create_issue", input: json.RawMessage(`{"title":"x","body":"y"}`)},
			detect.Subject{Kind: "tool", Text: "mcp__github__create_issue", Detail: "body: \"y\"\ntitle: \"x\""}},
		{"title only (gemini)", toolCall{kind: "execute", title: "touch first.txt"},
			detect.Subject{Kind: "command", Text: "touch first.txt"}},
		{"hostile", toolCall{input: json.RawMessage(`{"command":"echo \u001b[2J\u202e OPENAI_API_KEY=sk-abcdefghijklmnopqrstu"}`)},
			detect.Subject{Kind: "command", Text: "echo ⟨U+202E⟩ OPENAI_API_KEY=[redacted]"}},
	} {
		got := c.tc.subject()
		if got == nil || got.Kind != c.want.Kind || got.Text != c.want.Text || got.Detail != c.want.Detail || got.Truncated != c.want.Truncated {
			t.Errorf("%s: subject %+v, want %+v", c.name, got, c.want)
		}
	}
	if s := (toolCall{input: json.RawMessage(`null`)}).subject(); s != nil {
		t.Errorf("a tool call that says nothing: subject %+v, want none", s)
	}
}

func TestToolCallSubjectNewFileFromACPDiff(t *testing.T) {
	s := toolCall{kind: "edit", diffs: []acp.Diff{{Path: "/w/new.txt", NewText: "hi\n"}}}.subject()
	if s == nil || s.Kind != "write" || s.Text != "/w/new.txt" || s.Detail != "--- /w/new.txt\n+++ /w/new.txt\n@@ -0,0 +1 @@\n+hi\n" {
		t.Fatalf("subject %+v, want a write of /w/new.txt with its diff", s)
	}
}

package sessions

import (
	"encoding/json"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/agentd/agentd/acp"
	"github.com/agentd/agentd/detect"
)

// toolCall is what a structured source says of the tool call a prompt is
// about: an ACP permission's tool call, or a hook's tool_name and
// tool_input. Agents name their input fields differently, so the subject
// is read from the fields, not from a table of tool names.
type toolCall struct {
	name  string // the tool's name, where the source gives one
	kind  string // ACP's kind: execute, edit, read, fetch, …
	title string
	input json.RawMessage
	paths []string
	diffs []acp.Diff
}

// acpKinds maps ACP's tool kinds to a subject's.
var acpKinds = map[string]string{
	"execute": "command", "edit": "edit", "delete": "edit", "move": "edit",
	"read": "read", "search": "read", "fetch": "fetch",
}

// Input fields, in the order they are preferred: Claude's tools and its
// adapter send command / file_path / url, Codex's adapter the command as an
// argv, Gemini and Qwen path / absolute_path, OpenCode filePath.
var (
	commandKeys = []string{"command", "cmd"}
	pathKeys    = []string{"file_path", "filePath", "absolute_path", "notebook_path", "path"}
	urlKeys     = []string{"url"}
)

// subject is what tc asks to approve, bounded and cleaned; nil when the
// source says nothing of it.
func (tc toolCall) subject() *detect.Subject {
	var in map[string]json.RawMessage
	_ = json.Unmarshal(tc.input, &in)
	s := &detect.Subject{}
	cmd, path, url := field(in, commandKeys), field(in, pathKeys), field(in, urlKeys)
	if path == "" && len(tc.paths) > 0 {
		path = strings.Join(tc.paths, " ")
	}
	switch {
	case cmd != "":
		s.Kind, s.Text = "command", cmd
		if strings.Contains(cmd, "\n") {
			s.Detail = cmd
		}
	case in["content"] != nil && (path != "" || len(tc.diffs) > 0) || newFiles(tc.diffs):
		s.Kind, s.Text, s.Detail = "write", path, tc.diff(in, path)
		if s.Detail == "" {
			s.Detail = udiff.Unified("/dev/null", path, "", ensureNewline(plain(in["content"])))
		}
	case len(tc.diffs) > 0 || in["old_string"] != nil || in["new_string"] != nil || in["edits"] != nil:
		s.Kind, s.Text, s.Detail = "edit", path, tc.diff(in, path)
	case url != "":
		s.Kind, s.Text, s.Detail = "fetch", url, plain(in["prompt"])
	case path != "":
		s.Kind, s.Text = "read", path
	case tc.name != "" || len(in) > 0:
		s.Kind, s.Text, s.Detail = "tool", tc.name, indented(in)
		if s.Text == "" {
			s.Text = tc.title
		}
	case tc.title != "":
		s.Kind, s.Text = "tool", tc.title
	default:
		return nil
	}
	if s.Text == "" && len(tc.diffs) > 0 {
		s.Text = tc.diffs[0].Path
	}
	if k, ok := acpKinds[tc.kind]; ok && s.Kind == "tool" {
		s.Kind = k
	}
	s.Clean()
	return s
}

// diff is an edit's change as a unified diff: ACP's diffs, else the
// input's old and new strings (one edit, or a list of them).
func (tc toolCall) diff(in map[string]json.RawMessage, path string) string {
	var b strings.Builder
	for _, d := range tc.diffs {
		b.WriteString(udiff.Unified(d.Path, d.Path, d.OldText, d.NewText))
	}
	if b.Len() > 0 {
		return b.String()
	}
	if in["old_string"] == nil && in["new_string"] == nil && in["edits"] == nil {
		return ""
	}
	edits := []map[string]json.RawMessage{in}
	var list []map[string]json.RawMessage
	if json.Unmarshal(in["edits"], &list) == nil && len(list) > 0 {
		edits = list
	}
	for _, e := range edits {
		b.WriteString(udiff.Unified(path, path, ensureNewline(plain(e["old_string"])), ensureNewline(plain(e["new_string"]))))
	}
	return b.String()
}

// newFiles says whether every diff makes a new file.
func newFiles(ds []acp.Diff) bool {
	for _, d := range ds {
		if d.OldText != "" {
			return false
		}
	}
	return len(ds) > 0
}

func ensureNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// field is the first of keys in in that holds a string (or a list of
// strings, an argv, joined by spaces).
func field(in map[string]json.RawMessage, keys []string) string {
	for _, k := range keys {
		if v := plain(in[k]); v != "" {
			return v
		}
	}
	return ""
}

// plain reads a JSON string, or a list of strings joined by spaces.
func plain(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.TrimSpace(strings.Join(list, " "))
	}
	return ""
}

// indented is a tool's input as JSON a person can read: one field a row,
// in a stable order.
func indented(in map[string]json.RawMessage) string {
	if len(in) == 0 {
		return ""
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + ": " + string(in[k]) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

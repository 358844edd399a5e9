package acp

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// maxInput bounds the rendering of a tool call's input: enough to tell two
// requests apart in a notification, not a transcript.
const maxInput = 200

// inputKeys are the rawInput fields that say what a tool call will do, in
// the order they are preferred. Agents name them differently: Claude's
// adapter sends command / file_path / url, Codex's command as an argv,
// Gemini and Qwen path / absolute_path, OpenCode filePath / pattern.
var inputKeys = []string{"command", "cmd", "file_path", "filePath", "absolute_path", "path", "notebook_path", "url", "pattern", "query", "paths", "files"}

// Input renders what a permission is about in one short line: the command,
// the path or the URL its tool call names, else the files of its
// locations, else its raw input as compact JSON. Empty when the agent
// said nothing about the input.
func (p Permission) Input() string { return renderInput(p.RawInput, p.Paths) }

func renderInput(raw json.RawMessage, paths []string) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) == nil {
		for _, k := range inputKeys {
			if s := plain(fields[k]); s != "" {
				return clipText(s)
			}
		}
	}
	if len(paths) > 0 {
		return clipText(strings.Join(paths, " "))
	}
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	compact, _ := json.Marshal(v)
	return clipText(string(compact))
}

// plain reads a string, or a list of strings joined by spaces (an argv).
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

// clipText keeps the first line of s, at most maxInput characters.
func clipText(s string) string {
	line, rest, multi := strings.Cut(s, "\n")
	if utf8.RuneCountInString(line) > maxInput {
		r := []rune(line)
		return string(r[:maxInput-1]) + "…"
	}
	if multi && strings.TrimSpace(rest) != "" {
		return line + " …"
	}
	return line
}

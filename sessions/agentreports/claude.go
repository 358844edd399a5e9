package agentreports

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentd/agentd/detect"
)

// Claude Code's hooks (detect.HooksClaudeSettings): agentd gives them as a
// --settings layer for one launch, so hooks from the person's own
// settings files still run beside these, and reads the JSON each hook
// event hands its command.

// settingsHookEvents are the Claude Code hook events agentd listens to.
// Tool events take a matcher; the others do not.
var settingsHookEvents = []struct {
	name string
	tool bool
}{
	{"UserPromptSubmit", false}, {"PreToolUse", true}, {"PermissionRequest", true},
	{"PostToolUse", true}, {"Notification", false}, {"Stop", false},
	{"SessionStart", false}, {"SessionEnd", false},
}

// claudeSettings returns the --settings layer whose every hook runs
// `self report EVENT`; none without an agentd executable to run.
func claudeSettings(self string) []string {
	if self == "" {
		return nil
	}
	hooks := map[string]any{}
	for _, ev := range settingsHookEvents {
		entry := map[string]any{"hooks": []map[string]any{{
			"type": "command", "command": shellQuote(self) + " report " + ev.name, "timeout": 5,
		}}}
		if ev.tool {
			entry["matcher"] = "*"
		}
		hooks[ev.name] = []any{entry}
	}
	b, _ := json.Marshal(map[string]any{"hooks": hooks})
	return []string{"--settings", string(b)}
}

// shellQuote quotes s for sh: hooks run through the shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// claudeHookStates maps Claude Code hook events to states. Events not
// listed are accepted and change nothing. SessionStart is one of those:
// Claude Code 2.1.332 runs it with the first prompt ("running SessionStart
// hook" under the spinner), so on a busy machine its report came after
// the turn's working one, and read as idle it ended a turn that had just
// begun (test-under-load: done(unknown) while the screen said
// "✻ Actioning…").
var claudeHookStates = map[string]string{
	"UserPromptSubmit":  "working",
	"PreToolUse":        "working",
	"PostToolUse":       "working",
	"PermissionRequest": "blocked",
	"Stop":              "done",
	"SessionEnd":        "clear",
}

// readClaudeHook reads one Claude Code hook event's payload. A Stop's
// background_tasks (Claude Code 2.1.332) that list a running subagent are
// background work; what that means is the decision's.
func readClaudeHook(event string, payload json.RawMessage) (Reading, error) {
	r := Reading{Record: detect.StatusRecord{Progress: -1}}
	var p struct {
		ToolName         string          `json:"tool_name"`
		ToolInput        json.RawMessage `json:"tool_input"`
		NotificationType string          `json:"notification_type"`
		Message          string          `json:"message"`
		BackgroundTasks  []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"background_tasks"`
	}
	if len(payload) > 0 {
		if err := json.Unmarshal(payload, &p); err != nil {
			return r, fmt.Errorf("hook %s: payload is not JSON: %v", event, err)
		}
	}
	if (event == "PreToolUse" || event == "PermissionRequest") && p.ToolName != "" {
		// What the agent will run, where the screen shows what it drew
		// of it.
		r.Tool = &Tool{Name: p.ToolName, Input: p.ToolInput}
	}
	st, known := claudeHookStates[event]
	if event == "Notification" && p.NotificationType == "permission_prompt" {
		st, known = "blocked", true
	}
	if !known {
		return r, nil
	}
	for _, task := range p.BackgroundTasks {
		r.Background = r.Background || task.Type == "subagent" && task.Status == "running"
	}
	r.OK, r.Record.State = true, st
	if st == "blocked" {
		r.Record.Kind = "permission"
		r.Record.Message = p.Message
		if p.ToolName != "" {
			r.Record.Message = "approve " + p.ToolName + toolSummary(p.ToolInput)
		}
	}
	return r, nil
}

// toolSummary is a short rendering of a tool's input for a question.
func toolSummary(in json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(in, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "url", "pattern"} {
		if v, ok := m[k].(string); ok && v != "" {
			if len(v) > 120 {
				v = v[:120] + "…"
			}
			return ": " + strings.TrimSpace(v)
		}
	}
	return ""
}

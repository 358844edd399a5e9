package sessions

import (
	"encoding/json"
	"strings"

	"github.com/agentd/agentd/detect"
)

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

// hookArgs returns the arguments that make an agent report its state through
// `agentd report`, for agents whose manifest names a kind of hooks agentd
// gives ([reports] hooks). detect.HooksClaudeSettings: a --settings layer
// for this launch only (Claude Code's), so hooks from the person's own
// settings files still run beside these.
func hookArgs(kind, self string) []string {
	if kind != detect.HooksClaudeSettings || self == "" {
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

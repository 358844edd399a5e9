package agentreports

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/detect"
)

// Hooks are given by the kind the manifest names, not by the agent's name:
// none without a kind, a --settings layer whose every hook runs
// `agentd report EVENT` for claude-settings.
func TestHookArgsByKind(t *testing.T) {
	if _, ok := HooksFor(""); ok {
		t.Error("no kind: hooks given")
	}
	h, ok := HooksFor(detect.HooksClaudeSettings)
	if !ok {
		t.Fatal("claude-settings: no hooks")
	}
	if got := h.Args(""); got != nil {
		t.Errorf("no agentd binary to run: %q, want none", got)
	}
	got := h.Args("/opt/it's/agentd")
	if len(got) != 2 || got[0] != "--settings" {
		t.Fatalf("claude-settings: %q", got)
	}
	var settings struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct{ Command string }
		}
	}
	if err := json.Unmarshal([]byte(got[1]), &settings); err != nil {
		t.Fatal(err)
	}
	for _, ev := range settingsHookEvents {
		h := settings.Hooks[ev.name]
		if len(h) != 1 || len(h[0].Hooks) != 1 {
			t.Fatalf("%s: %+v", ev.name, h)
		}
		if want := `'/opt/it'\''s/agentd' report ` + ev.name; h[0].Hooks[0].Command != want {
			t.Errorf("%s runs %q, want %q", ev.name, h[0].Hooks[0].Command, want)
		}
		if ev.tool != (h[0].Matcher == "*") {
			t.Errorf("%s: matcher %q", ev.name, h[0].Matcher)
		}
	}
	if strings.Contains(got[1], "\n") {
		t.Errorf("the settings span lines: %q", got[1])
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A manifest alone adds an agent: $XDG_CONFIG_HOME/agentd/rules/deployer.toml
// for a program agentd has never heard of (a bash script named deployer,
// not an agent CLI) makes it identified from the process alone, classified
// (idle, working, blocked with its options) and answerable, with no
// release. The answer really reaches the program.
func TestAUserManifestAddsAnAgent(t *testing.T) {
	cfg := t.TempDir()
	rules := filepath.Join(cfg, "agentd", "rules")
	if err := os.MkdirAll(rules, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `name = "deployer"
display = "Deployer"
[identify]
process = ["deployer"]
[[region]]
name = "last"
bottom = 1
[[rule]]
id = "confirm"
state = "blocked"
region = "last"
match = ['^Ship build \d+ to production\? \[y/N\]\s*$']
prompt = "confirm"
[[rule]]
id = "working"
state = "working"
region = "last"
match = ['^Building\.\.\.$']
[[rule]]
id = "ready"
state = "idle"
region = "last"
match = ['^deployer>\s*$']
[prompt.confirm]
kind = "confirm"
question = '^(Ship build \d+ to production\?)'
option = '(?P<key>(?P<label>[yN]))[/\]]'
keys = "{key}<enter>"
reject = '^N$'
`
	if err := os.WriteFile(filepath.Join(rules, "deployer.toml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	prog := filepath.Join(t.TempDir(), "deployer")
	script := "#!/bin/bash\n" +
		"while true; do\n" +
		"  printf 'deployer> '; read -r cmd || exit 0\n" +
		"  [ \"$cmd\" = ship ] || continue\n" +
		"  echo 'Building...'; sleep 1\n" +
		"  printf 'Ship build 42 to production? [y/N] '; read -r a\n" +
		"  [ \"$a\" = y ] && touch shipped.txt && echo Shipped.\n" +
		"done\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", cfg)
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{prog}, "cwd": work}, &s)
	if s.Agent != "deployer" {
		t.Fatalf("identified as %q, want deployer (from the user's manifest)", s.Agent)
	}
	from := 0
	c.waitState(s.SessionID, "idle", &from, 20*time.Second)
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "ship", "submit": true}, nil)
	c.waitState(s.SessionID, "working", &from, 20*time.Second)
	b := c.waitPrompt(s.SessionID, &from, 20*time.Second)
	var labels []string
	for _, o := range b.Prompt.Options {
		labels = append(labels, o.Label)
	}
	if b.Prompt.Question != "Ship build 42 to production?" || strings.Join(labels, ",") != "y,N" || b.Reason != "deployer.confirm" {
		t.Fatalf("blocked %s: question %q options %q", b.Reason, b.Prompt.Question, labels)
	}
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": optionByLabel(t, b, "y")}, nil)
	c.waitState(s.SessionID, "done", &from, 20*time.Second)
	if _, err := os.Stat(filepath.Join(work, "shipped.txt")); err != nil {
		t.Errorf("the answer did not reach the program: %v", err)
	}
	t.Logf("states: %s", strings.Join(c.states(s.SessionID), " → "))
}

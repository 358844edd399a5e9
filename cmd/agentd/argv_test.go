package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// argv is executed as given, never through a shell: shell syntax in an
// argument reaches the program as text and runs nothing.
func TestArgvIsNeverGivenToAShell(t *testing.T) {
	c := startAgentd(t)
	dir := t.TempDir()
	hostile := "$(touch subst); `touch backtick`; touch semicolon > redirect | touch pipe"
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{"printf", "[%s]", hostile}, "cwd": dir}, &s)
	from := 0
	c.waitState(s.SessionID, "exited", &from, 30*time.Second)
	if got := c.screen(s.SessionID); !strings.Contains(got, "["+hostile+"]") {
		t.Errorf("printf did not print its argument as text; screen:\n%s", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("the session's argument ran as shell: %s was created", filepath.Join(dir, e.Name()))
	}
}

//go:build unix

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDemo runs `agentd demo` whole: it talks to `agentd --stdio` with rpc's
// own codec and types, so it breaks if they stop matching what agentd sends.
func TestDemo(t *testing.T) {
	bin := agentdBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, bin, "demo")
	cmd.Env = append(cleanEnvForDemo(),
		"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_RUNTIME_DIR="+filepath.Join(home, "run"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("agentd demo did not end within 3 minutes; it printed:\n%s\nstderr:\n%s", out.String(), errOut.String())
	}
	if err != nil {
		t.Fatalf("agentd demo: %v\n%s\nstderr:\n%s", err, out.String(), errOut.String())
	}
	for _, want := range []string{
		`recognised as "demo"`,
		"state: the agent is working",
		"session/list: s1 is still there",
		"state: the agent NEEDS YOU",
		"runtime_send while blocked is refused (code -32020)",
		"the answer was typed",
		"finished its turn (completed), not yet seen",
		"state: the agent has exited",
		"demo complete: the turn ended completed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("agentd demo's output lacks %q:\n%s", want, out.String())
		}
	}
}

// cleanEnvForDemo is the test's environment without the XDG folders the
// demo's daemon would otherwise log to.
func cleanEnvForDemo() []string {
	var env []string
	for _, kv := range exec.Command("true").Environ() {
		if !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	return env
}

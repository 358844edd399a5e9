//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/rpc/hosts/hoststest"
)

// An editor's sidecar for another machine (agentd --stdio --host NAME): a
// session started through it runs there, answers as any would, and runs on
// when the editor leaves. A host that is down answers the editor's
// initialize with ssh's own words, naming the host.
func TestStdioForwardsToAHost(t *testing.T) {
	keys := hoststest.NewKeys(t)
	a := hoststest.Start(t, keys, "a", agentdBinary(t))
	d := newDaemonEnv(t)
	configHome := t.TempDir()
	hoststest.WriteConfig(t, configHome, a)
	d.env = append(d.env, "XDG_CONFIG_HOME="+configHome)

	// What an editor reads to start a sidecar per host: no host reached.
	out, errOut, code := d.cli("hosts", "--configured")
	if code != 0 || strings.TrimSpace(out) != `{"hosts":[{"name":"local","local":true},{"name":"a","ssh":"127.0.0.1"}]}` {
		t.Fatalf("agentd hosts --configured: exit %d\n%s%s", code, out, errOut)
	}

	c := startClient(t, []string{"--stdio", "--host", "a"}, d.env)
	if c.init.Daemon.Pid == 0 || c.init.Daemon.Pid == d.pid() {
		t.Fatalf("initialize through --host a: daemon %+v; want host a's daemon, started there", c.init.Daemon)
	}
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{agentdBinary(t), "demo-agent"}, "cwd": a.Dir, "name": "demo", "cols": 80, "rows": 24}, &s)
	from := 0
	c.waitState(s.SessionID, "idle", &from, 30*time.Second)
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "Add a NOTES.md file", "submit": true}, nil)
	p := c.waitPrompt(s.SessionID, &from, 30*time.Second)
	if code := c.close(); code != 0 {
		t.Errorf("the sidecar exited %d when the editor left, want 0", code)
	}
	if d.pid() != 0 {
		t.Errorf("this machine has a daemon (pid %d): the sidecar for host a started one here", d.pid())
	}

	// The session runs on there, waiting on the same prompt.
	out, errOut, code = d.cli("ls", "-H", "a", "--json")
	var l sessionList
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil || len(l.Sessions) != 1 || l.Sessions[0].State != "blocked" ||
		l.Sessions[0].Prompt == nil || l.Sessions[0].Prompt.PromptID != p.Prompt.PromptID {
		t.Fatalf("host a after the editor left: exit %d\n%s%s; want demo blocked on %s", code, out, errOut, p.Prompt.PromptID)
	}

	// Host a down: the editor is told why, by name.
	a.Down()
	var stderr bytes.Buffer
	r := startRawCmd(t, &stderr, []string{"--stdio", "--host", "a"}, d.env, "")
	err := r.call("initialize", map[string]any{"clientInfo": map[string]string{"name": "agentd-test"}}, nil)
	if err == nil || !strings.Contains(err.Message, "host a") || !strings.Contains(err.Message, "Connection refused") {
		t.Fatalf("initialize with host a down: %v; want an error naming host a and ssh's refusal (stderr: %s)", err, stderr.String())
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The bench's client speaks to a real `agentd --stdio --private` with rpc's
// codec and reads its states as protocol.StateNotification: the demo agent's
// idle state and its permission prompt arrive decoded.
func TestClientReadsStates(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := &bench{root: root, tmp: dir, agentd: filepath.Join(dir, "agentd")}
	build := exec.Command("go", "build", "-o", b.agentd, "./cmd/agentd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	env = append(env, "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	p, err := b.startClient([]string{"--stdio", "--private"}, env)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	id, err := p.spawn(map[string]any{"argv": []string{b.agentd, "demo-agent"}, "cwd": dir, "cols": 100, "rows": 30})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.waitState(id, "idle", time.Minute); err != nil {
		t.Fatal(err)
	}
	first := p.states(id)[0]
	if first.Agent != "demo" || first.StateSource != "screen" || first.Reason == "" {
		t.Fatalf("first state %+v: want agent demo, a screen source and a reason", first.StateNotification)
	}
	if err := p.call("runtime_send", map[string]any{"sessionId": id, "text": "Add a NOTES.md file", "submit": true}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.waitPrompt(id, "Do you want to proceed?", time.Minute); err != nil {
		t.Fatalf("%v; states seen: %s", err, describeStates(p.states(id), time.Now()))
	}
}

//go:build unix

package web

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/rpc/hosts/hoststest"
)

// TestBrowserHosts is the page of `agentd web --hosts` in a real Chromium
// at 390×844: this machine and two others reached over real ssh (OpenSSH
// servers on loopback, each its own daemon, rpc/hosts/hoststest), every one
// with a demo session with the same id and name, a's and b's blocked on
// the same command. e2e/hosts.mjs checks the grouping under host headers,
// answers a's (b still waits), and, as this test takes b off the network
// and back, sees b shown down with ssh's words and its buttons off, then
// back with its session waiting, and answers it. editors/web/ci.sh runs it.
func TestBrowserHosts(t *testing.T) {
	if os.Getenv("AGENTD_WEB_BROWSER") == "" {
		t.Skip("the browser test runs with AGENTD_WEB_BROWSER=1 (make web, editors/web/ci.sh): it needs Chromium and npm ci in editors/web")
	}
	bin := agentdBinary(t)
	keys := hoststest.NewKeys(t)
	a, b := hoststest.Start(t, keys, "a", bin), hoststest.Start(t, keys, "b", bin)
	d, localID := startDaemon(t)
	configHome := t.TempDir()
	hoststest.WriteConfig(t, configHome, a, b)
	env := append(append([]string(nil), d.env...), "XDG_CONFIG_HOME="+configHome)
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("agentd %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, h := range []string{"a", "b"} {
		if id := cli("run", "-H", h, "--name", "demo", "--", bin, "demo-agent"); id != localID {
			t.Fatalf("host %s's demo is %s, this machine's %s: the test wants the same id on each", h, id, localID)
		}
	}
	d.waitState(localID, "idle")
	for _, h := range []string{"a", "b"} {
		cli("wait", h+":demo", "--until", "idle", "--timeout", "60s")
		cli("send", h+":demo", "Add a NOTES.md file")
		cli("wait", h+":demo", "--until", "blocked", "--timeout", "60s")
	}
	link, _ := startWebWith(t, env, "--hosts", "--listen", "127.0.0.1:0")

	artifacts := os.Getenv("ARTIFACTS")
	if artifacts == "" {
		artifacts = "artifacts"
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "e2e/hosts.mjs")
	cmd.Env = append(os.Environ(), "LINK="+link, "ARTIFACTS="+artifacts, "ID="+localID)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		l := sc.Text()
		out.WriteString(l + "\n")
		switch l {
		case "# host b down":
			b.Down()
		case "# host b up":
			b.Up()
		default:
			continue
		}
		if _, err := io.WriteString(stdin, "done\n"); err != nil {
			t.Fatal(err)
		}
	}
	stdin.Close()
	err = cmd.Wait()
	t.Logf("e2e/hosts.mjs:\n%s", out.String())
	if err != nil {
		t.Fatalf("e2e/hosts.mjs: %v", err)
	}
	if !strings.Contains(out.String(), "# fail 0") {
		t.Fatal("e2e/hosts.mjs printed no clean summary")
	}
	// Seen from the daemons: a's and b's demo answered, each finishing its
	// turn (and a's, looked at on the page, seen: idle); this machine's
	// never asked anything.
	for _, h := range []string{"a", "b"} {
		deadline := time.Now().Add(60 * time.Second)
		for {
			var l struct {
				Sessions []struct{ State string } `json:"sessions"`
			}
			out := cli("ls", "-H", h, "--json")
			if json.Unmarshal([]byte(out), &l) == nil && len(l.Sessions) == 1 && (l.Sessions[0].State == "done" || l.Sessions[0].State == "idle") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("host %s's demo 60 s after its answer: %s; want its turn done", h, out)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if s := d.waitState(localID, "idle"); s.Prompt != nil {
		t.Errorf("this machine's demo: %+v", s)
	}
}

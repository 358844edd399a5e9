package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// config.toml's [[notify]] entries, through the real binary: a URL entry
// gets the blocked event's JSON once in the cooldown; a command that hangs
// holds up nothing: the session is answered and moves on while it runs.
func TestNotifyEntriesThroughAgentd(t *testing.T) {
	var mu sync.Mutex
	var posts []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev map[string]any
		_ = json.Unmarshal(b, &ev)
		mu.Lock()
		posts = append(posts, ev)
		mu.Unlock()
	}))
	defer srv.Close()
	cfg := t.TempDir()
	hung := filepath.Join(t.TempDir(), "hung")
	conf := `[[notify]]
name = "receiver"
url = "` + srv.URL + `"

[[notify]]
name = "hangs"
timeout = "60s"
command = ["sh", "-c", "echo $$ > ` + hung + `; sleep 300"]
`
	if err := os.MkdirAll(filepath.Join(cfg, "agentd"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "agentd", "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(withoutAgentdEnv(os.Environ()), "XDG_CONFIG_HOME="+cfg)
	c := startClient(t, []string{"--stdio", "--private", "--log", filepath.Join(t.TempDir(), "agentd.log")}, env)
	script := `read -r -p "Deploy? [y/N] " a; echo "got:$a"; read -r -p "Really? [y/N] " b; sleep 30`
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", script}, "cwd": t.TempDir()}, &s)
	from := 0
	b := c.waitState(s.SessionID, "blocked", &from, 20*time.Second)
	// The hanging command runs; the session is answered and moves on to
	// its next prompt all the same.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(hung); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hanging notify command did not start within 20 s of blocked")
		}
	}
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": "1"}, nil)
	b2 := c.waitState(s.SessionID, "blocked", &from, 20*time.Second)
	if b2.Prompt == nil || b2.Prompt.Question != "Really?" {
		t.Fatalf("after the answer: %+v", b2)
	}
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
	// A notify command does not outlive the agentd that started it.
	c.close()
	pidText, _ := os.ReadFile(hung)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	for deadline := time.Now().Add(20 * time.Second); pid > 0 && syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hanging notify command (pid %d) outlived agentd by 20 s", pid)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(posts) != 1 {
		t.Fatalf("%d POSTs, want 1 (the second prompt came within the cooldown): %v", len(posts), posts)
	}
	if posts[0]["sessionId"] != s.SessionID || posts[0]["state"] != "blocked" || !strings.Contains(posts[0]["text"].(string), "Deploy?") {
		t.Fatalf("the POST: %v", posts[0])
	}
}

// TestNotifyCarriesTheSubjectAsData: a [[notify]] entry hears what a prompt
// asks to approve, as data. The demo agent is asked to run a hostile
// command, one a model could write: a shell substitution, a backquote and
// an API key. The webhook's JSON and a command's stdin carry the command
// in prompt.subject and in text, with the key redacted, and nothing in
// it is run: the notify command only copies its stdin.
func TestNotifyCarriesTheSubjectAsData(t *testing.T) {
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	const key = "sk-ant-api03-abcdefghijklmnop0123456789"
	hostile := "echo $(touch " + pwned + ") `touch " + pwned + "` ANTHROPIC_API_KEY=" + key
	got := make(chan []byte, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- b
	}))
	defer srv.Close()
	stdinCopy := filepath.Join(dir, "stdin.json")
	conf := `[[notify]]
name = "receiver"
url = "` + srv.URL + `"
states = ["blocked"]

[[notify]]
name = "copies"
states = ["blocked"]
command = ["sh", "-c", "cat > ` + stdinCopy + `.part && mv ` + stdinCopy + `.part ` + stdinCopy + `"]
`
	cfg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfg, "agentd"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "agentd", "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(withoutAgentdEnv(os.Environ()), "XDG_CONFIG_HOME="+cfg)
	c := startClient(t, []string{"--stdio", "--private", "--log", filepath.Join(t.TempDir(), "agentd.log")}, env)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{agentdBinary(t), "demo-agent"}, "cwd": dir, "cols": 200, "rows": 30}, &s)
	from := 0
	c.waitState(s.SessionID, "idle", &from, 20*time.Second)
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "please run " + hostile, "submit": true}, nil)
	b := c.waitPrompt(s.SessionID, &from, 30*time.Second)
	redacted := strings.Replace(hostile, key, "[redacted]", 1)
	if sub := b.Prompt.Subject; sub == nil || sub.Kind != "command" || sub.Text != redacted {
		t.Fatalf("the prompt's subject %+v, want the command with its key redacted: %q", b.Prompt.Subject, redacted)
	}
	check := func(where string, body []byte) {
		t.Helper()
		var ev struct {
			Text   string `json:"text"`
			Prompt struct {
				Subject struct{ Kind, Text string } `json:"subject"`
			} `json:"prompt"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Fatalf("%s: %v: %s", where, err, body)
		}
		if ev.Prompt.Subject.Kind != "command" || ev.Prompt.Subject.Text != redacted || !strings.Contains(ev.Text, "command: "+redacted) {
			t.Errorf("%s carries subject %+v and text %q, want the command %q in both", where, ev.Prompt.Subject, ev.Text, redacted)
		}
		if strings.Contains(string(body), "abcdefghijklmnop") {
			t.Errorf("%s carries the API key: %s", where, body)
		}
	}
	select {
	case body := <-got:
		check("the webhook's JSON", body)
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook POST within 30 s of the prompt")
	}
	var body []byte
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if body, err = os.ReadFile(stdinCopy); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the notify command wrote no copy of its stdin within 30 s of the prompt")
		}
	}
	check("the notify command's stdin", body)
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	c.waitState(s.SessionID, "exited", &from, 20*time.Second)
	c.close()
	if _, err := os.Stat(pwned); err == nil {
		t.Fatalf("%s exists: a part of the command was run", pwned)
	}
}

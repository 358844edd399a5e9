package notices

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/rpc/config"
	"github.com/agentd/agentd/sessions"
)

func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// loadNotify is the [[notify]] entries of a config.toml of body.
func loadNotify(t *testing.T, body string) []config.Notify {
	t.Helper()
	cfg, err := config.Load(writeConfig(t, body))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Notify
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func blockedInfo(id string) sessions.Info {
	return sessions.Info{ID: id, Name: "fix-tests", Agent: "claude", Cwd: "/src/app", State: sessions.State{
		Name: sessions.Blocked, Source: sessions.SourceScreen, Reason: "claude.permission", Since: time.Now(),
		Prompt: &detect.Prompt{ID: "abc", Kind: "permission", Question: "Run touch x?",
			Options: []detect.Option{{ID: "1", Label: "Yes"}, {ID: "2", Label: "No"}}},
	}}
}

// A URL entry gets the event's JSON, once per session and state in the
// cooldown, from a real HTTP receiver on loopback.
func TestNotifyPostsOncePerCooldown(t *testing.T) {
	got := make(chan []byte, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s with %q", r.Method, r.Header.Get("Content-Type"))
		}
		got <- b
	}))
	defer srv.Close()
	entries := loadNotify(t, "[[notify]]\nname = \"hook\"\nurl = \""+srv.URL+"\"\nstates = [\"blocked\", \"done\"]\n")
	a := NewCommands(entries, time.Hour, testLog(t))
	info := blockedInfo("s1")
	a.State(info, sessions.State{Name: sessions.Working})
	a.wait()
	a.State(info, sessions.State{Name: sessions.Working}) // within the cooldown: nothing
	other := info
	other.State.Name, other.State.Prompt = sessions.Idle, nil
	a.State(other, info.State) // a state the entry does not want: nothing
	a.wait()
	if n := len(got); n != 1 {
		t.Fatalf("%d POSTs, want 1", n)
	}
	var ev NotifyEvent
	if err := json.Unmarshal(<-got, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.SessionID != "s1" || ev.State != "blocked" || ev.Previous != "working" || ev.Agent != "claude" || ev.Cwd != "/src/app" ||
		!strings.Contains(ev.Text, "Run touch x? [Yes / No]") || ev.Prompt == nil {
		t.Fatalf("event %+v", ev)
	}
}

// A command that hangs is killed, with all it started, at its timeout (3 s:
// long enough for sh to start and write its pids on a loaded machine); an
// event that comes while it runs is skipped, not queued behind it.
func TestNotifyCommandKilledAtItsTimeout(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	entries := loadNotify(t, "[[notify]]\nname = \"slow\"\ntimeout = \"3s\"\ncommand = [\"sh\", \"-c\", \"cat > "+pidFile+".json; sleep 300 & echo $$ $! > "+pidFile+"; wait\"]\n")
	a := NewCommands(entries, time.Hour, testLog(t))
	a.State(blockedInfo("s1"), sessions.State{Name: sessions.Working})
	a.State(blockedInfo("s2"), sessions.State{Name: sessions.Working}) // skipped: s1's run is in flight
	done := make(chan struct{})
	go func() { a.wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the run was not ended within 30 s of its 3 s timeout")
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the command never ran: %v", err)
	}
	// The shell and the sleep it started: both end (the sleep, no child of
	// ours, may stay a moment as a zombie until init reaps it).
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		deadline := time.Now().Add(30 * time.Second)
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("process %d of the command outlived its timeout by 30 s", pid)
		}
	}
	var ev NotifyEvent
	if b, err := os.ReadFile(pidFile + ".json"); err != nil || json.Unmarshal(b, &ev) != nil || ev.SessionID != "s1" {
		t.Errorf("the command's stdin: %s, %v", b, err)
	}
}

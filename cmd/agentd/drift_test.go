package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/sessions"
)

// Drift from the field, end to end: a program whose own report says it
// waits on a person (agentd signal needs-input, as a hook would) while its
// screen matches no rule. The daemon keeps that screen in its state
// folder, agentd doctor lists it, agentd capture writes the screen on
// request, and agentd classify reads both files back. A key on the screen
// never reaches either file.
func TestDriftScreenKeptListedCapturedAndClassified(t *testing.T) {
	d := newDaemonEnv(t)
	c := d.forwarder()
	const secret = "sk-ant-api03-AAAAbbbbCCCCddddEEEE"
	script := "printf '\\033[1mDeploy target\\033[0m\\n  Use F5 for staging, F6 for production\\n  token " + secret + "\\n'; " +
		shellWord(agentdBinary(t)) + " signal needs-input; sleep 120"
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", script}, "cwd": t.TempDir(), "cols": 80, "rows": 24}, &s)
	from := 0
	st := c.waitState(s.SessionID, "blocked", &from, 30*time.Second)
	if st.Reason != "signal.needs-input" {
		t.Fatalf("blocked for %s, want signal.needs-input", st.Reason)
	}

	// The screen reads idle for 5 s under a report of blocked: kept.
	dir := filepath.Join(d.stateHome(), "agentd", "screens")
	var kept []string
	deadline := time.Now().Add(60 * time.Second)
	for len(kept) == 0 {
		if time.Now().After(deadline) {
			out, _, _ := d.cli("doctor")
			t.Fatalf("no screen kept in %s 60 s after the report disagreed with the screen; doctor said:\n%s", dir, out)
		}
		time.Sleep(100 * time.Millisecond)
		kept, _ = sessions.KeptScreens(dir)
	}
	b, err := os.ReadFile(kept[0])
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := sessions.ReadScreenRecord(b)
	if !ok {
		t.Fatalf("%s is not a kept screen:\n%s", kept[0], b)
	}
	if rec.Session != s.SessionID || rec.State != "blocked" || rec.Verdict.State != "idle" || !strings.Contains(rec.Why, "says blocked") {
		t.Errorf("kept: session %s state %s verdict %s (%s), why %q; want %s, blocked, idle, a report saying blocked",
			rec.Session, rec.State, rec.Verdict.State, rec.Verdict.Reason, rec.Why, s.SessionID)
	}
	if !strings.Contains(rec.Raw, "Use F5 for staging") || strings.Contains(rec.Raw, secret) || strings.Contains(string(b), secret) {
		t.Errorf("kept raw screen: want the screen's text with the key redacted, got %q", rec.Raw)
	}
	if st, err := os.Stat(kept[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("kept screen mode %v (%v), want 0600", st.Mode().Perm(), err)
	}

	// doctor lists it.
	out, errOut, code := d.cli("doctor")
	if code != 0 || !strings.Contains(out, filepath.Base(kept[0])) || !strings.Contains(out, "says blocked") {
		t.Errorf("agentd doctor (exit %d) does not list %s:\n%s%s", code, filepath.Base(kept[0]), out, errOut)
	}

	// capture writes the screen now; classify reads both files.
	captured := filepath.Join(t.TempDir(), "screen.json")
	out, errOut, code = d.cli("capture", s.SessionID, "-o", captured)
	if code != 0 || !strings.Contains(out, "wrote "+captured) {
		t.Fatalf("agentd capture: exit %d\n%s%s", code, out, errOut)
	}
	if b, err := os.ReadFile(captured); err != nil || strings.Contains(string(b), secret) {
		t.Errorf("the captured file holds the key, or cannot be read (%v)", err)
	}
	for _, f := range []string{kept[0], captured} {
		out, errOut, code := d.cli("classify", f)
		want := f + ": " + rec.Agent + " idle"
		if code != 0 || !strings.HasPrefix(out, want) {
			t.Errorf("agentd classify %s: exit %d, %q, want a line starting %q\n%s", f, code, out, want, errOut)
		}
		out, _, code = d.cli("explain", f)
		if code != 0 || !strings.Contains(out, "screen: 80x24") || !strings.Contains(out, "from the kept screen") || !strings.Contains(out, "(generic reader)") {
			t.Errorf("agentd explain %s: exit %d, want the 80x24 screen, its agent from the file and the generic reader tried:\n%s", f, code, out)
		}
	}
	c.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
}

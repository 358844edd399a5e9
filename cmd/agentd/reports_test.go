package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/sessions"
)

// environOf reads a process's environment from /proc.
func environOf(t *testing.T, pid int) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(data), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

func sendRaw(t *testing.T, sock string, rep sessions.Report) sessions.ReportReply {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := json.NewEncoder(conn).Encode(rep); err != nil {
		t.Fatal(err)
	}
	var reply sessions.ReportReply
	if err := json.NewDecoder(bufio.NewReader(conn)).Decode(&reply); err != nil {
		t.Fatal(err)
	}
	return reply
}

// The report socket: a private folder and socket, one token per session,
// forged and cross-session reports refused and logged, and a program inside
// a session moving its state with `agentd signal`.
func TestReportSocket(t *testing.T) {
	runtime := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	logPath := filepath.Join(t.TempDir(), "agentd.log")
	c := startAgentdLog(t, logPath)
	var a, b spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{"sleep", "60"}, "cwd": t.TempDir()}, &a)
	script := "sleep 1; " + shellWord(agentdBinary(t)) + " signal needs-input; sleep 60"
	c.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", script}, "cwd": t.TempDir()}, &b)
	envA, envB := environOf(t, a.Pid), environOf(t, b.Pid)
	sock := envA[sessions.EnvSocket]
	if sock == "" || filepath.Dir(sock) != filepath.Join(runtime, "agentd") {
		t.Fatalf("socket %q, want it under %s/agentd", sock, runtime)
	}
	for path, want := range map[string]os.FileMode{filepath.Dir(sock): 0o700, sock: 0o600} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s has mode %o, want %o", path, st.Mode().Perm(), want)
		}
	}
	if envA[sessions.EnvToken] == "" || envA[sessions.EnvToken] == envB[sessions.EnvToken] {
		t.Fatalf("tokens: %q and %q, want two different ones", envA[sessions.EnvToken], envB[sessions.EnvToken])
	}
	for k, v := range envA {
		if strings.Contains(v, envB[sessions.EnvToken]) {
			t.Errorf("session a's %s holds session b's token", k)
		}
	}
	// Forged: no token, a wrong token, the other session's token.
	for _, rep := range []sessions.Report{
		{Session: a.SessionID, Kind: "signal", Event: "needs-input"},
		{Session: a.SessionID, Token: strings.Repeat("0", 64), Kind: "signal", Event: "needs-input"},
		{Session: a.SessionID, Token: envB[sessions.EnvToken], Kind: "signal", Event: "needs-input"},
		{Session: "s404", Token: envA[sessions.EnvToken], Kind: "signal", Event: "needs-input"},
	} {
		if reply := sendRaw(t, sock, rep); reply.OK || !strings.Contains(reply.Error, "refused") {
			t.Errorf("forged report %+v was answered %+v", rep, reply)
		}
	}
	if reply := sendRaw(t, sock, sessions.Report{Session: a.SessionID, Token: envA[sessions.EnvToken], Kind: "signal", Event: "dance"}); reply.OK {
		t.Errorf("an unknown signal was accepted")
	}
	// The real program in session b says it needs input.
	from := 0
	st := c.waitState(b.SessionID, "blocked", &from, 10*time.Second)
	if st.StateSource != "hook" || st.Reason != "signal.needs-input" {
		t.Errorf("blocked from %s (%s), want hook / signal.needs-input", st.StateSource, st.Reason)
	}
	for _, s := range c.states(a.SessionID) {
		if strings.HasPrefix(s, "blocked") {
			t.Errorf("a forged report moved session a: %v", c.states(a.SessionID))
		}
	}
	c.close()
	log, _ := os.ReadFile(logPath)
	if n := strings.Count(string(log), `msg="report refused"`); n != 5 {
		t.Errorf("%d refusals logged, want 5:\n%s", n, log)
	}
	if strings.Contains(string(log), envA[sessions.EnvToken]) || strings.Contains(string(log), envB[sessions.EnvToken]) {
		t.Errorf("a token reached the log")
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket is still there after agentd exited: %v", err)
	}
}

func shellWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

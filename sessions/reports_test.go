package sessions

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// reportDir is a short folder for a report socket (a socket's path is
// bounded), removed after the test.
func reportDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "r")
}

// sendReport sends one report as `agentd report`/`agentd signal` do and
// returns agentd's reply.
func sendReport(t *testing.T, sock string, rep any) ReportReply {
	t.Helper()
	conn, err := net.DialTimeout("unix", sock, 10*time.Second)
	if err != nil {
		t.Fatalf("dial the report socket: %v", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if s, ok := rep.(string); ok {
		_, err = conn.Write([]byte(s))
	} else {
		err = json.NewEncoder(conn).Encode(rep)
	}
	if err != nil {
		t.Fatalf("write the report: %v", err)
	}
	var reply ReportReply
	if err := json.NewDecoder(conn).Decode(&reply); err != nil {
		t.Fatalf("read the reply: %v", err)
	}
	return reply
}

// procEnv is the environment process pid started with.
func procEnv(t *testing.T, pid int) map[string]string {
	t.Helper()
	// Start returns once the exec has closed the child's descriptors, a
	// moment before the kernel has laid out the new program's environment:
	// until then /proc shows it empty.
	var b []byte
	for deadline := time.Now().Add(10 * time.Second); len(b) == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var err error
		if b, err = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err != nil {
			t.Fatalf("read the environment of %d: %v", pid, err)
		}
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// awaitReason waits, as a guard, until id's last published state has the
// reason given.
func awaitReason(t *testing.T, ev *recEvents, id, name, reason string) State {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if st := ev.last(id); st.Name == name && st.Reason == reason {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("session %s: waited 20 s for %s (%s), last published %+v", id, name, reason, ev.last(id))
	return State{}
}

// Reports reach the session they name through the socket, with that
// session's token, which its program finds in its environment; a report
// with another token, or for no session, is refused and changes nothing.
// A signal and a hook each make their state.
func TestReportsReachTheirSession(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules, ReportDir: reportDir(t)}, ev)
	defer m.Shutdown()
	sock := m.ReportSocket()
	if sock == "" {
		t.Fatal("no report socket with ReportDir set")
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the socket: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the socket's folder: %v, mode %v; want 0700", err, fi.Mode().Perm())
	}
	s, err := m.Spawn(SpawnSpec{Argv: []string{"sleep", "60"}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	other, err := m.Spawn(SpawnSpec{Argv: []string{"sleep", "60"}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	env := procEnv(t, s.Pid)
	token := env[EnvToken]
	if env[EnvSocket] != sock || env[EnvSession] != s.ID || len(token) != 64 {
		t.Fatalf("the program's environment: socket %q session %q token of %d chars; want %q, %q and 64 hex digits", env[EnvSocket], env[EnvSession], len(token), sock, s.ID)
	}
	otherToken := procEnv(t, other.Pid)[EnvToken]
	if otherToken == token {
		t.Fatal("two sessions were given the same token")
	}

	for name, rep := range map[string]Report{
		"another session's token": {Session: s.ID, Token: otherToken, Kind: "signal", Event: "needs-input"},
		"no token":                {Session: s.ID, Kind: "signal", Event: "needs-input"},
		"no such session":         {Session: "s99", Token: token, Kind: "signal", Event: "needs-input"},
	} {
		if reply := sendReport(t, sock, rep); reply.OK || !strings.Contains(reply.Error, "refused") {
			t.Errorf("%s: reply %+v, want refused", name, reply)
		}
	}
	s.mu.Lock()
	refusedTaken := s.machine.report != nil
	s.mu.Unlock()
	if refusedTaken {
		t.Fatal("a refused report reached the session's decision")
	}
	for name, c := range map[string]struct {
		rep  any
		want string
	}{
		"unknown signal": {Report{Session: s.ID, Token: token, Kind: "signal", Event: "finished"}, "unknown signal"},
		"unknown kind":   {Report{Session: s.ID, Token: token, Kind: "osc", Event: "done"}, "unknown report kind"},
		"not JSON":       {"{this is not json\n", "bad report"},
	} {
		if reply := sendReport(t, sock, c.rep); reply.OK || !strings.Contains(reply.Error, c.want) {
			t.Errorf("%s: reply %+v, want an error saying %q", name, reply, c.want)
		}
	}

	send := func(rep Report) {
		t.Helper()
		rep.Session, rep.Token = s.ID, token
		if reply := sendReport(t, sock, rep); !reply.OK {
			t.Fatalf("report %s %s refused: %s", rep.Kind, rep.Event, reply.Error)
		}
	}
	// A session starts as working (process.starting), and only a change
	// of state is published: make it blocked first.
	send(Report{Kind: "signal", Event: "needs-input"})
	st := awaitReason(t, ev, s.ID, Blocked, "signal.needs-input")
	if st.Prompt == nil || st.Prompt.Kind != "question" || st.Prompt.Question != "needs input" {
		t.Fatalf("after signal needs-input: prompt %+v, want a question, needs input", st.Prompt)
	}
	send(Report{Kind: "signal", Event: "working"})
	if st := awaitReason(t, ev, s.ID, Working, "signal.working"); st.Source != SourceHook {
		t.Fatalf("after signal working: %+v, want source hook", st)
	}
	send(Report{Kind: "hook", Event: "PermissionRequest", Payload: json.RawMessage(`{"tool_name":"Bash","tool_input":{"command":"rm -rf build"}}`)})
	st = awaitReason(t, ev, s.ID, Blocked, "hook.PermissionRequest")
	if st.Prompt == nil || st.Prompt.Kind != "permission" || st.Prompt.Question != "approve Bash: rm -rf build" {
		t.Fatalf("after the PermissionRequest hook: %+v prompt %+v, want a permission asking to approve Bash: rm -rf build", st, st.Prompt)
	}
	// A Stop whose turn hands over to a running background agent is not
	// the end of the turn.
	send(Report{Kind: "hook", Event: "Stop", Payload: json.RawMessage(`{"background_tasks":[{"type":"subagent","status":"running"}]}`)})
	awaitReason(t, ev, s.ID, Working, "hook.Stop")
	send(Report{Kind: "hook", Event: "Stop", Payload: json.RawMessage(`{"background_tasks":[{"type":"subagent","status":"completed"}]}`)})
	if st := awaitReason(t, ev, s.ID, Done, "hook.Stop"); st.Outcome != "completed" {
		t.Fatalf("after Stop: %+v, want done, completed", st)
	}
	// A hook event that says nothing of the state is accepted and leaves
	// the report as it was.
	send(Report{Kind: "hook", Event: "PreCompact"})
	s.mu.Lock()
	reason := s.machine.report.reason
	s.mu.Unlock()
	if reason != "hook.Stop" {
		t.Fatalf("after PreCompact the newest report is %q, want hook.Stop kept", reason)
	}
	if st := ev.last(other.ID); st.Source == SourceHook {
		t.Fatalf("the other session took a report sent to %s: %+v", s.ID, st)
	}

	m.Shutdown()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("the socket after shutdown: %v, want it removed", err)
	}
}

// reportRecord on its own: the hook events that mean a state, a
// Notification only when it is a permission prompt, and a long tool input
// cut short.
func TestReportRecord(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, c := range []struct {
		rep     Report
		ok      bool
		state   string
		message string
	}{
		{Report{Kind: "hook", Event: "UserPromptSubmit"}, true, "working", ""},
		{Report{Kind: "hook", Event: "SessionStart"}, false, "", ""}, // runs with the first prompt: says nothing
		{Report{Kind: "hook", Event: "SessionEnd"}, true, "clear", ""},
		{Report{Kind: "hook", Event: "Notification", Payload: json.RawMessage(`{"notification_type":"idle_prompt","message":"waiting"}`)}, false, "", ""},
		{Report{Kind: "hook", Event: "Notification", Payload: json.RawMessage(`{"notification_type":"permission_prompt","message":"Claude needs your permission"}`)}, true, "blocked", "Claude needs your permission"},
		{Report{Kind: "hook", Event: "PermissionRequest", Payload: json.RawMessage(`{"tool_name":"Read","tool_input":{"file_path":"/etc/hosts"}}`)}, true, "blocked", "approve Read: /etc/hosts"},
		{Report{Kind: "hook", Event: "PermissionRequest", Payload: json.RawMessage(`{"tool_name":"Bash","tool_input":{"command":"` + long + `"}}`)}, true, "blocked", "approve Bash: " + long[:120] + "…"},
		{Report{Kind: "signal", Event: "done"}, true, "done", ""},
		{Report{Kind: "signal", Event: "turn-ended"}, true, "done", ""},
	} {
		rec, _, _, ok, err := reportRecord(c.rep, "")
		if err != nil || ok != c.ok || (ok && (rec.State != c.state || rec.Message != c.message)) {
			t.Errorf("%s %s: %+v ok %v err %v; want ok %v, state %q, message %q", c.rep.Kind, c.rep.Event, rec, ok, err, c.ok, c.state, c.message)
		}
	}
	if _, _, _, _, err := reportRecord(Report{Kind: "hook", Event: "Stop", Payload: json.RawMessage(`[1,2`)}, ""); err == nil {
		t.Error("a hook whose payload is not JSON was taken")
	}
}

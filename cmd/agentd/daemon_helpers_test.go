package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/sessions"
)

// daemonEnv is a per-user daemon of the test's own: its socket in a fresh
// private folder (AGENTD_SOCKET), its log and state in temporary folders,
// so nothing touches the real user's daemon. Cleanup stops it (ending its
// sessions) and checks it is gone.
type daemonEnv struct {
	t      testing.TB
	dir    string // the socket's folder
	socket string
	log    string
	env    []string
}

func newDaemonEnv(t testing.TB) *daemonEnv {
	t.Helper()
	root := t.TempDir()
	d := &daemonEnv{t: t, dir: filepath.Join(root, "run"), log: filepath.Join(root, "agentd.log")}
	d.socket = filepath.Join(d.dir, "agentd.sock")
	d.env = append(withoutAgentdEnv(os.Environ()), "AGENTD_SOCKET="+d.socket, "XDG_STATE_HOME="+filepath.Join(root, "state"))
	t.Cleanup(d.stop)
	return d
}

// stateHome is the daemon's XDG_STATE_HOME.
func (d *daemonEnv) stateHome() string {
	for _, kv := range d.env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			return v
		}
	}
	d.t.Fatal("the daemon has no XDG_STATE_HOME")
	return ""
}

// withoutAgentdEnv drops the variables a test run inside an agentd session
// would otherwise pass on to the agentd under test. AGENTD_PORTABLE stays:
// make portable runs these tests on the paths macOS takes.
//
// The agentd under test gets no session bus: run on a person's desktop, its
// blocked demo sessions would pop notices there. The desktop-notice tests
// give theirs a private bus.
func withoutAgentdEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "AGENTD_") && !strings.HasPrefix(kv, sessions.EnvPortable+"=") {
			continue
		}
		if strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "DBUS_SESSION_BUS_ADDRESS=disabled:")
}

// forwarder starts `agentd --stdio` (the editor's sidecar) against this
// daemon, starting the daemon if none runs, and sends initialize.
func (d *daemonEnv) forwarder(extra ...string) *stdioClient {
	d.t.Helper()
	return startClient(d.t, append([]string{"--stdio", "--log", d.log}, extra...), d.env)
}

// cli runs an agentd CLI command against this daemon.
func (d *daemonEnv) cli(args ...string) (stdout, stderr string, code int) {
	d.t.Helper()
	cmd := exec.Command(agentdBinary(d.t), args...)
	cmd.Env = d.env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		d.t.Fatalf("agentd %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), e.String(), code
}

// pid is the running daemon's pid, from its lock file; 0 when none runs.
func (d *daemonEnv) pid() int {
	b, err := os.ReadFile(d.socket + ".lock")
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid == 0 || !alive(pid) {
		return 0
	}
	return pid
}

// stop ends the daemon and its sessions, and checks that it exits.
func (d *daemonEnv) stop() {
	pid := d.pid()
	if pid == 0 {
		return
	}
	cmd := exec.Command(agentdBinary(d.t), "stop", "--force")
	cmd.Env = d.env
	if out, err := cmd.CombinedOutput(); err != nil {
		d.t.Errorf("agentd stop --force: %v: %s", err, out)
	}
	waitGone(d.t, []int{pid}, 20*time.Second)
}

// sessionList is session/list's result as a test reads it.
type sessionList struct {
	Sessions []struct {
		SessionID string `json:"sessionId"`
		Name      string `json:"name"`
		State     string `json:"state"`
		Pid       int    `json:"pid"`
		Cwd       string `json:"cwd"`
		Prompt    *struct {
			PromptID string `json:"promptId"`
			Question string `json:"question"`
			Options  []struct {
				ID    string `json:"id"`
				Label string `json:"label"`
			} `json:"options"`
		} `json:"prompt"`
		Origin *struct {
			Client           string   `json:"client"`
			WorkspaceFolders []string `json:"workspaceFolders"`
		} `json:"origin"`
		Exit *struct {
			ExitCode int    `json:"exitCode"`
			Signal   string `json:"signal"`
		} `json:"exit"`
	} `json:"sessions"`
}

func (c *stdioClient) list() sessionList {
	c.t.Helper()
	var l sessionList
	c.mustCall("session/list", nil, &l)
	return l
}

// stateSeq is the sequence of (state, promptId) a client was told for a
// session, for comparing what two clients saw.
func (c *stdioClient) stateSeq(sessionID string) []string {
	var out []string
	for _, n := range c.stateNotes(sessionID) {
		k := n.note.State
		if n.note.Prompt != nil {
			k += "/" + n.note.Prompt.PromptID
		}
		out = append(out, k)
	}
	return out
}

// stateTrail is the session's states as this client saw them, each with
// its source and reason: what a failure message needs to say why.
func (c *stdioClient) stateTrail(sessionID string) string {
	var out []string
	for _, n := range c.stateNotes(sessionID) {
		k := n.note.State
		if n.note.Outcome != "" {
			k += "(" + n.note.Outcome + ")"
		}
		out = append(out, k+" ["+n.note.StateSource+" "+n.note.Reason+"]")
	}
	return strings.Join(out, " → ")
}

// keeperChildren checks that the daemon's only child left is its keeper.
func keeperOnly(t testing.TB, daemon int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		live, zombies := liveChildren(daemon)
		if len(live) == 1 && strings.HasSuffix(cmdlineOf(live[0]), " keeper") && len(zombies) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var what []string
			for _, p := range live {
				what = append(what, strconv.Itoa(p)+" "+cmdlineOf(p))
			}
			t.Fatalf("the daemon's children: %v (zombies %v), want only its keeper", what, zombies)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var _ = json.Marshal

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/fixtures/fakemodel"
	"github.com/agentd/agentd/fixtures/lab"
)

// loginSpawned is a spawn result of an ACP agent that logs in first.
type loginSpawned struct {
	spawned
	Reason         string `json:"reason"`
	Message        string `json:"message"`
	LoginSessionID string `json:"loginSessionId"`
}

// authData is the data of a -32014 spawn error.
type authData struct {
	AgentInfo struct {
		Name, Title, Version string
	} `json:"agentInfo"`
	Message     string `json:"message"`
	AuthMethods []struct {
		ID, Name, Description, Type, Command, Label string
		Args                                        []string
	} `json:"authMethods"`
}

func spawnNeedingAuth(t *testing.T, c *stdioClient, params map[string]any) authData {
	t.Helper()
	err := c.call("session/spawn", params, nil)
	je, ok := err.(*jsonrpc2.Error)
	if !ok || je.Code != -32014 || je.Data == nil {
		t.Fatalf("spawn: %v, want the -32014 auth error with data", err)
	}
	var d authData
	if err := json.Unmarshal(*je.Data, &d); err != nil {
		t.Fatal(err)
	}
	t.Logf("refused: %s; data %s", je.Message, *je.Data)
	return d
}

// copilotDeviceMarkers are the variables that make Copilot 1.0.102's
// "copilot login" use GitHub's device code instead of opening a browser
// (found by setting each by hand; CI=false counts too). Offline the device
// code cannot be fetched and the login fails at once; a CI runner sets CI.
var copilotDeviceMarkers = []string{"CI", "BUILD_NUMBER", "RUN_ID", "CODESPACES", "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY"}

// copilotLoginSpawn is the spawn of the real Copilot CLI over ACP, offline,
// with its bring-your-own-model variables and tokens unset, so session/new
// answers auth_required.
func copilotLoginSpawn(t *testing.T, bin string) map[string]any {
	home, work := t.TempDir(), t.TempDir()
	env := map[string]*string{"HOME": &home, "COPILOT_AUTO_UPDATE": ptr("false")}
	for _, k := range []string{"COPILOT_OFFLINE", "COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_API_KEY", "COPILOT_MODEL", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN"} {
		env[k] = nil
	}
	return map[string]any{"argv": []string{bin, "--acp"}, "cwd": work, "env": env, "protocol": "acp", "agent": "copilot"}
}

// The real Copilot CLI needs a login: the spawn error names Copilot and
// carries its login method with the command the agent gave. Spawned with
// that method, the login runs as a session of its own, the real "copilot
// login". Where it opens a browser it waits for one that never comes here,
// so this test stops it, and the ACP session ends saying why. Where it uses
// a device code (over SSH, on CI) it fails offline by itself, and the ACP
// session ends saying that. (The login that succeeds is
// TestACPTerminalLoginThenSession's, on a stand-in.)
func TestCopilotACPNeedsLogin(t *testing.T) {
	bin := requireAgent(t, "copilot")
	c := startAgentd(t)
	params := copilotLoginSpawn(t, bin)
	d := spawnNeedingAuth(t, c, params)
	if d.AgentInfo.Name != "Copilot" || d.Message != "Authentication required" || len(d.AuthMethods) != 1 {
		t.Fatalf("auth data %+v, want Copilot's own refusal and its one method", d)
	}
	m := d.AuthMethods[0]
	if m.ID != "copilot-login" || m.Type != "terminal" || filepath.Base(m.Command) != "copilot" || strings.Join(m.Args, " ") != "login" || m.Label != "Copilot Login" {
		t.Fatalf("method %+v, want copilot-login running copilot login", m)
	}

	t.Run("browser", func(t *testing.T) {
		params := copilotLoginSpawn(t, bin)
		for _, k := range copilotDeviceMarkers {
			params["env"].(map[string]*string)[k] = nil
		}
		params["authMethod"] = "copilot-login"
		var s loginSpawned
		c.mustCall("session/spawn", params, &s)
		// agent "copilot" has a display manifest: its name is the manifest's.
		if s.State != "error" || s.Reason != "acp.login" || s.LoginSessionID == "" || s.Name != "GitHub Copilot CLI" {
			t.Fatalf("spawned %+v, want an error (acp.login) session named GitHub Copilot CLI with its login session", s)
		}
		screen := waitScreen(t, c, s.LoginSessionID, "Waiting for authorization", 60*time.Second)
		if !strings.Contains(screen, "Waiting for authorization") {
			t.Fatalf("the login session does not show copilot's browser login (with %v unset):\n%s", copilotDeviceMarkers, screen)
		}
		if err := c.call("session/prompt", map[string]any{"sessionId": s.SessionID, "text": "hi"}, nil); rpcCode(err) != -32014 {
			t.Errorf("a prompt while logging in: %v, want -32014", err)
		}
		from := 0
		c.mustCall("session/kill", map[string]any{"sessionId": s.LoginSessionID}, nil)
		ended := c.waitState(s.SessionID, "exited", &from, 30*time.Second)
		if ended.Reason != "acp.login_failed" || !strings.Contains(ended.Message, "login ended by SIGHUP") {
			t.Errorf("after the login was stopped: %+v, want acp.login_failed saying so", ended)
		}
	})

	t.Run("device code", func(t *testing.T) {
		params := copilotLoginSpawn(t, bin)
		params["env"].(map[string]*string)["CI"] = ptr("true")
		params["authMethod"] = "copilot-login"
		var s loginSpawned
		c.mustCall("session/spawn", params, &s)
		from := 0
		ended := c.waitState(s.SessionID, "exited", &from, 60*time.Second)
		if ended.Reason != "acp.login_failed" || ended.Message != "the login exited 1" {
			t.Errorf("after copilot's device login failed offline: %+v, want acp.login_failed saying the login exited 1", ended)
		}
		if screen := waitScreen(t, c, s.LoginSessionID, "Login failed", 10*time.Second); !strings.Contains(screen, "Login failed") {
			t.Errorf("the login session does not show why it failed:\n%s", screen)
		}
	})
}

// A stand-in agent (acpLoginStandIn, labelled there) that logs in in a
// terminal: the spawn error lists its method, the login runs as a PTY
// session where a person answers it, and when it exits 0 agentd starts the
// agent again and the session opens: idle, then a turn runs.
func TestACPTerminalLoginThenSession(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	agent := filepath.Join(dir, "acp-login-standin")
	if err := os.Symlink(self, agent); err != nil {
		t.Fatal(err)
	}
	c := startAgentd(t)
	params := map[string]any{"argv": []string{agent}, "cwd": dir, "protocol": "acp", "env": map[string]*string{"STANDIN_HOME": &dir}}
	d := spawnNeedingAuth(t, c, params)
	if len(d.AuthMethods) != 1 || d.AuthMethods[0].Command != agent || d.AuthMethods[0].Type != "terminal" {
		t.Fatalf("auth data %+v, want the stand-in's own program as its login", d)
	}
	params["authMethod"] = d.AuthMethods[0].ID
	var s loginSpawned
	c.mustCall("session/spawn", params, &s)
	if s.State != "error" || s.Reason != "acp.login" || s.LoginSessionID == "" || s.Name != "Stand-in Agent" || s.Agent != "standin" {
		t.Fatalf("spawned %+v, want the stand-in waiting on its login", s)
	}
	if screen := waitScreen(t, c, s.LoginSessionID, "Log in? [y/N]", 30*time.Second); !strings.Contains(screen, "Log in? [y/N]") {
		t.Fatalf("login screen:\n%s", screen)
	}
	c.mustCall("session/input", map[string]any{"sessionId": s.LoginSessionID, "data": "y\r"}, nil)
	from := 0
	idle := c.waitState(s.SessionID, "idle", &from, 30*time.Second)
	if idle.Reason != "acp.ready" {
		t.Errorf("after the login: %+v, want acp.ready", idle)
	}
	c.mustCall("session/prompt", map[string]any{"sessionId": s.SessionID, "text": "hello"}, nil)
	if done := c.waitState(s.SessionID, "done", &from, 30*time.Second); done.Outcome != "completed" {
		t.Errorf("turn ended %+v", done)
	}
	// Spawned again, now logged in, it opens at once: no login session.
	delete(params, "authMethod")
	var again loginSpawned
	c.mustCall("session/spawn", params, &again)
	if again.LoginSessionID != "" || again.State != "working" && again.State != "idle" {
		t.Errorf("spawned after the login %+v, want a running session", again)
	}
}

func ptr(s string) *string { return &s }

// The real Claude Code ACP adapter with no key starts, then refuses the
// first prompt: the session is in error (acp.auth_required) with the
// agent's words, never done/failed.
func TestClaudeACPLoginRequiredMidSession(t *testing.T) {
	bin := requireAgent(t, "claude-code-acp")
	d := labDirs(t)
	l, _, err := lab.ClaudeACP(bin, d, &fakemodel.Script{}, lab.ClaudeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	env := envMap(l.Env, append(lab.ClaudeUnset, "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")...)
	c := startAgentd(t)
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": l.Argv, "cwd": d.Work, "env": env, "protocol": "acp"}, &s)
	from := 0
	c.waitState(s.SessionID, "idle", &from, 60*time.Second)
	c.mustCall("session/prompt", map[string]any{"sessionId": s.SessionID, "text": "hello"}, nil)
	c.waitState(s.SessionID, "working", &from, 20*time.Second)
	e := c.waitState(s.SessionID, "error", &from, 60*time.Second)
	if e.Reason != "acp.auth_required" || e.Message == "" {
		t.Errorf("refused prompt: %+v, want acp.auth_required with the agent's message", e)
	}
	t.Logf("states %s; message %q", strings.Join(c.states(s.SessionID), " → "), e.Message)
}

package sessions

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestMain runs this test binary as a fake menu agent (guard_test.go)
// when AGENTD_TEST_MENU_AGENT is set, and as a FAKE ACP agent when
// AGENTD_TEST_ACP_AGENT is set: the sessions tests need an ACP agent that
// starts at once and asks one permission per prompt, with no model and no
// account behind it. It speaks ACP through the SDK's agent side, so the
// wire is the protocol's; the real agents (Gemini, Qwen, Copilot, … over
// --acp) run in cmd/agentd's end-to-end tests.
//
// With AGENTD_TEST_ACP_AUTH_FILE set, the fake offers a "terminal" login
// (this binary again, as AGENTD_TEST_ACP_AGENT=login) and answers
// session/new with auth_required until that file exists: the login makes
// it when it reads the code "ok" on its terminal, and exits 1 on any
// other.
//
// With AGENTD_TEST_ACP_TERMINAL set to a command line, a prompt runs it in
// a terminal of the client's (terminal/create), waits for its exit, reads
// its output, tells it as an agent message ("exit N: output"), releases
// the terminal and ends the turn, asking no permission.
func TestMain(m *testing.M) {
	if os.Getenv("AGENTD_TEST_MENU_AGENT") != "" {
		os.Exit(fakeMenuAgent())
	}
	switch os.Getenv("AGENTD_TEST_ACP_AGENT") {
	case "login":
		os.Exit(fakeLogin(os.Getenv("AGENTD_TEST_ACP_AUTH_FILE")))
	case "1":
		a := &fakeACPAgent{authFile: os.Getenv("AGENTD_TEST_ACP_AUTH_FILE"), terminal: os.Getenv("AGENTD_TEST_ACP_TERMINAL")}
		a.conn = sdk.NewAgentSideConnection(a, os.Stdout, os.Stdin)
		<-a.conn.Done()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeLogin is the fake agent's terminal login: it asks for a code on its
// terminal and logs in (makes authFile) when the code is "ok".
func fakeLogin(authFile string) int {
	fmt.Print("Paste the code: ")
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ok" {
		fmt.Println("wrong code")
		return 1
	}
	if err := os.WriteFile(authFile, []byte("logged in\n"), 0o600); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("logged in")
	return 0
}

// loggedIn says whether the fake's login ran (always, without a login).
func (a *fakeACPAgent) loggedIn() bool {
	if a.authFile == "" {
		return true
	}
	_, err := os.Stat(a.authFile)
	return err == nil
}

// fakeACPAgent answers the handshake and, for every prompt, asks to run
// "touch x" and ends the turn once answered.
type fakeACPAgent struct {
	conn     *sdk.AgentSideConnection
	authFile string // see TestMain; "" when it needs no login
	terminal string // see TestMain; "" to ask a permission instead
}

func (a *fakeACPAgent) Initialize(context.Context, sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	methods := []sdk.AuthMethod{}
	if a.authFile != "" {
		methods = append(methods, sdk.AuthMethod{Terminal: &sdk.AuthMethodTerminalInline{
			Id: "fake-login", Name: "Log in to the fake", Type: "terminal",
			Args: []string{"login"}, Env: map[string]any{"AGENTD_TEST_ACP_AGENT": "login"},
		}})
	}
	return sdk.InitializeResponse{ProtocolVersion: sdk.ProtocolVersionNumber, AgentInfo: &sdk.Implementation{Name: "fake-acp", Version: "1.0.0"}, AuthMethods: methods}, nil
}

func (a *fakeACPAgent) NewSession(context.Context, sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if !a.loggedIn() {
		return sdk.NewSessionResponse{}, sdk.NewAuthRequired(nil)
	}
	return sdk.NewSessionResponse{SessionId: "fake-1"}, nil
}

func (a *fakeACPAgent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	if a.terminal != "" {
		return a.runTerminal(ctx, p.SessionId)
	}
	title := "touch x"
	res, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: p.SessionId,
		ToolCall:  sdk.ToolCallUpdate{ToolCallId: "call-1", Title: &title},
		Options: []sdk.PermissionOption{
			{OptionId: "allow", Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
			{OptionId: "reject", Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		},
	})
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	if res.Outcome.Cancelled != nil {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

func (a *fakeACPAgent) Cancel(context.Context, sdk.CancelNotification) error { return nil }

var errFakeACP = errors.New("the fake agent does not do this")

func (a *fakeACPAgent) Authenticate(_ context.Context, req sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	if a.authFile != "" && req.MethodId == "fake-login" && a.loggedIn() {
		return sdk.AuthenticateResponse{}, nil
	}
	return sdk.AuthenticateResponse{}, errFakeACP
}
func (a *fakeACPAgent) CloseSession(context.Context, sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, errFakeACP
}
func (a *fakeACPAgent) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, errFakeACP
}
func (a *fakeACPAgent) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, errFakeACP
}
func (a *fakeACPAgent) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, errFakeACP
}
func (a *fakeACPAgent) SetSessionMode(context.Context, sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, errFakeACP
}

// spawnFakeACP starts this test binary as the fake ACP agent in a
// session of m.
func spawnFakeACP(t *testing.T, m *Manager) *Session {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	on := "1"
	s, err := m.Spawn(SpawnSpec{Argv: []string{self}, Cwd: t.TempDir(), ACP: true, Env: map[string]*string{"AGENTD_TEST_ACP_AGENT": &on}})
	if err != nil {
		t.Fatalf("spawn the fake ACP agent: %v", err)
	}
	return s
}

// runTerminal runs a.terminal in a terminal of the client's and tells its
// exit and output.
func (a *fakeACPAgent) runTerminal(ctx context.Context, sid sdk.SessionId) (sdk.PromptResponse, error) {
	t, err := a.conn.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: sid, Command: a.terminal,
		Env: []sdk.EnvVariable{{Name: "FROM_AGENT", Value: "yes"}}})
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	ex, err := a.conn.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: t.TerminalId})
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	out, err := a.conn.TerminalOutput(ctx, sdk.TerminalOutputRequest{SessionId: sid, TerminalId: t.TerminalId})
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	code := -1
	if ex.ExitCode != nil {
		code = *ex.ExitCode
	}
	msg := fmt.Sprintf("exit %d: %s", code, out.Output)
	if err := a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: sdk.UpdateAgentMessageText(msg)}); err != nil {
		return sdk.PromptResponse{}, err
	}
	if _, err := a.conn.ReleaseTerminal(ctx, sdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: t.TerminalId}); err != nil {
		return sdk.PromptResponse{}, err
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

package sessions

import (
	"context"
	"errors"
	"os"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestMain runs this test binary as a FAKE ACP agent when
// AGENTD_TEST_ACP_AGENT is set: the sessions tests need an ACP agent that
// starts at once and asks one permission per prompt, with no model and no
// account behind it. It speaks ACP through the SDK's agent side, so the
// wire is the protocol's; the real agents (Gemini, Qwen, Copilot, … over
// --acp) run in cmd/agentd's end-to-end tests.
func TestMain(m *testing.M) {
	if os.Getenv("AGENTD_TEST_ACP_AGENT") == "1" {
		a := &fakeACPAgent{}
		a.conn = sdk.NewAgentSideConnection(a, os.Stdout, os.Stdin)
		<-a.conn.Done()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeACPAgent answers the handshake and, for every prompt, asks to run
// "touch x" and ends the turn once answered.
type fakeACPAgent struct{ conn *sdk.AgentSideConnection }

func (a *fakeACPAgent) Initialize(context.Context, sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	return sdk.InitializeResponse{ProtocolVersion: sdk.ProtocolVersionNumber, AgentInfo: &sdk.Implementation{Name: "fake-acp", Version: "1.0.0"}, AuthMethods: []sdk.AuthMethod{}}, nil
}

func (a *fakeACPAgent) NewSession(context.Context, sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	return sdk.NewSessionResponse{SessionId: "fake-1"}, nil
}

func (a *fakeACPAgent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
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

func (a *fakeACPAgent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
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

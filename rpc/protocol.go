// Package rpc is agentd's editor-facing JSON-RPC 2.0 server over stdio with
// LSP base-protocol framing. Handlers are thin: they decode params, call
// sessions, encode results. docs/protocol.md is the normative reference;
// the types here mirror it.
package rpc

import (
	"encoding/json"

	"github.com/agentd/agentd/acp"
	"github.com/agentd/agentd/detect"
)

// ProtocolVersion is bumped when a change would break a client.
const ProtocolVersion = 1

// Error codes. JSON-RPC's own are -32700..-32600; agentd's are its own range.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	CodeShuttingDown    = -32000
	CodeSessionNotFound = -32010
	CodeSessionExited   = -32011
	CodeSpawnFailed     = -32012
	CodeInputBacklog    = -32013
	// CodeAuthRequired: an ACP agent will not open a session until someone
	// logs in; the error's data lists its authMethods.
	CodeAuthRequired    = -32014
	CodeSessionBlocked  = -32020
	CodePromptStale     = -32021
	CodeOptionUnknown   = -32022
	CodeNotAnswerable   = -32024
	CodeAlreadyAnswered = -32025
	CodeTurnRunning     = -32026
	CodeNotSupported    = -32030
	// CodeSessionsRunning refuses agentd/stop without force while agents run.
	CodeSessionsRunning = -32040
	// CodeIncompatible: a forwarder or CLI whose protocol version differs
	// from the running daemon's.
	CodeIncompatible = -32041
	// CodeNoDaemon: no daemon runs, and --no-start starts none: no news,
	// an editor's autoconnect says nothing.
	CodeNoDaemon = -32042
	// CodeDaemonUnavailable: the forwarder could neither reach nor start
	// the daemon, for the reason in the message (a socket folder others can
	// reach, a daemon that failed as it started): an editor says it.
	CodeDaemonUnavailable = -32043
)

// FocusParams report a client's focus, and its desktop-notice setting.
type FocusParams struct {
	Focused bool `json:"focused"`
	// DesktopNotifications false turns desktop notices off while this
	// client is connected (its editor setting); absent leaves them as
	// config.toml says.
	DesktopNotifications *bool `json:"desktopNotifications,omitempty"`
}

// HelloParams introduce a client of the daemon.
type HelloParams struct {
	Version         string `json:"version"`
	ProtocolVersion int    `json:"protocolVersion"`
	Pid             int    `json:"pid"`
	// Cwd is the client's working folder: a spawn without cwd runs there.
	Cwd string `json:"cwd,omitempty"`
	// Env is the client's environment ("K=V"): sessions it spawns run in
	// it, with session/spawn's env added.
	Env []string `json:"env,omitempty"`
	// CooldownMs is this client's attention cooldown (the forwarder's
	// --cooldown); 0 keeps the daemon's.
	CooldownMs int64 `json:"cooldownMs,omitempty"`
}

// HelloResult describes the daemon.
type HelloResult struct {
	Daemon
	Warnings []string `json:"warnings,omitempty"`
}

// Daemon describes the agentd process that owns the sessions.
type Daemon struct {
	Version         string `json:"version"`
	ProtocolVersion int    `json:"protocolVersion"`
	Pid             int    `json:"pid"`
	// Instance changes each time a daemon starts: session ids of another
	// instance are not these sessions.
	Instance  string `json:"instance"`
	Socket    string `json:"socket,omitempty"`
	StartedAt string `json:"startedAt"`
	// Private: the sessions end with this one client (agentd --stdio --private).
	Private bool `json:"private"`
	// LastUpgrade is the last handover this daemon took part in (agentd
	// upgrade), failed or not.
	LastUpgrade *UpgradeRecord `json:"lastUpgrade,omitempty"`
}

// StopParams ask the daemon to end.
type StopParams struct {
	// Force ends the sessions that still run; without it a daemon with
	// live sessions refuses (CodeSessionsRunning).
	Force bool `json:"force,omitempty"`
}

// InitializeParams opens a connection.
type InitializeParams struct {
	ClientInfo   *ClientInfo    `json:"clientInfo,omitempty"`
	Capabilities map[string]any `json:"capabilities,omitempty"`
	// WorkspaceFolders are the folders the editor has open; sessions it
	// spawns record them, so every editor can list "this workspace" first.
	WorkspaceFolders []string `json:"workspaceFolders,omitempty"`
}

// ClientInfo names the editor.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Background: the client only watches on the person's behalf (another
	// machine's agentd raising desktop notices for this one's sessions),
	// so it does not keep an idle daemon running.
	Background bool `json:"background,omitempty"`
}

// InitializeResult describes agentd.
type InitializeResult struct {
	ServerInfo      ClientInfo  `json:"serverInfo"`
	ProtocolVersion int         `json:"protocolVersion"`
	Agents          []AgentInfo `json:"agents"`
	Daemon          Daemon      `json:"daemon"`
	// Warnings are for the person: e.g. the daemon is another build than
	// the agentd the editor started.
	Warnings []string `json:"warnings,omitempty"`
}

// AgentInfo is one agent agentd has rules for.
type AgentInfo struct {
	Name    string   `json:"name"`
	Display string   `json:"display"`
	Process []string `json:"process,omitempty"`
}

// SpawnParams starts a session.
type SpawnParams struct {
	Argv []string `json:"argv"`
	Cwd  string   `json:"cwd"`
	// Env is added to the client's environment (what its agentd/hello
	// carried; agentd's own without one); a null value removes a variable.
	Env      map[string]*string `json:"env,omitempty"`
	Cols     int                `json:"cols,omitempty"`
	Rows     int                `json:"rows,omitempty"`
	Agent    string             `json:"agent,omitempty"`
	Protocol string             `json:"protocol,omitempty"` // "pty" (default) or "acp"
	Hooks    *bool              `json:"hooks,omitempty"`
	Name     string             `json:"name,omitempty"`
	// AuthMethod is the id of the ACP login method to use, one of the
	// authMethods a CodeAuthRequired error listed.
	AuthMethod string `json:"authMethod,omitempty"`
}

// ACPAgentInfo is what an ACP agent said of itself in initialize.
type ACPAgentInfo struct {
	Name    string `json:"name,omitempty"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version,omitempty"`
}

// AuthRequiredData is the data of a CodeAuthRequired error.
type AuthRequiredData struct {
	AgentInfo ACPAgentInfo `json:"agentInfo"`
	// Message is the agent's own words.
	Message     string           `json:"message"`
	AuthMethods []acp.AuthMethod `json:"authMethods"`
}

// Session is what agentd tells about a session.
type Session struct {
	SessionID   string         `json:"sessionId"`
	Name        string         `json:"name"`
	Agent       string         `json:"agent"`
	Argv        []string       `json:"argv"`
	Cwd         string         `json:"cwd"`
	Pid         int            `json:"pid"`
	Cols        int            `json:"cols"`
	Rows        int            `json:"rows"`
	State       string         `json:"state"`
	Outcome     string         `json:"outcome,omitempty"`
	StateSource string         `json:"stateSource"`
	Reason      string         `json:"reason"`
	Since       string         `json:"since"`
	Prompt      *detect.Prompt `json:"prompt,omitempty"`
	// Message is the agent's own words for an error state, where it gave any.
	Message string `json:"message,omitempty"`
	Exit    *Exit  `json:"exit,omitempty"`
	// AgentInfo is an ACP agent's own name for itself.
	AgentInfo *ACPAgentInfo `json:"agentInfo,omitempty"`
	// LoginSessionID is the PTY session running an ACP agent's terminal
	// login (spawned with a terminal authMethod); show it to the person.
	LoginSessionID string `json:"loginSessionId,omitempty"`
	// Origin is the client that spawned the session and its folders.
	Origin *Origin `json:"origin,omitempty"`
}

// Origin says where a session was started from.
type Origin struct {
	Client           string   `json:"client,omitempty"`
	WorkspaceFolders []string `json:"workspaceFolders,omitempty"`
}

// Exit is how a session's process ended.
type Exit struct {
	ExitCode int    `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
	At       string `json:"at,omitempty"`
}

// SessionRef names a session.
type SessionRef struct {
	SessionID string `json:"sessionId"`
}

// ListResult lists sessions.
type ListResult struct {
	Sessions []Session `json:"sessions"`
}

// ReadResult is a session's screen.
type ReadResult struct {
	Rows     []string `json:"rows"`
	Cursor   Cursor   `json:"cursor"`
	Title    string   `json:"title"`
	Revision uint64   `json:"revision"`
}

// Cursor is a zero-based screen position.
type Cursor struct {
	Row     int  `json:"row"`
	Col     int  `json:"col"`
	Visible bool `json:"visible"`
}

// ResizeParams resizes a session.
type ResizeParams struct {
	SessionID string `json:"sessionId"`
	Cols      int    `json:"cols"`
	Rows      int    `json:"rows"`
}

// InputParams carries a person's keystrokes.
type InputParams struct {
	SessionID string `json:"sessionId"`
	Data      string `json:"data"`
}

// SubscribeParams starts (output: true) or stops output notifications.
type SubscribeParams struct {
	SessionID string `json:"sessionId"`
	Output    bool   `json:"output"`
}

// KillParams signals a session's process group.
type KillParams struct {
	SessionID string `json:"sessionId"`
	Signal    string `json:"signal,omitempty"`
}

// PromptParams sends an ACP prompt turn.
type PromptParams struct {
	SessionID string `json:"sessionId"`
	Text      string `json:"text"`
}

// SendParams is programmatic input.
type SendParams struct {
	SessionID string `json:"sessionId"`
	Text      string `json:"text"`
	Submit    bool   `json:"submit,omitempty"`
}

// AnswerParams answers the prompt on screen.
type AnswerParams struct {
	SessionID string `json:"sessionId"`
	PromptID  string `json:"promptId"`
	OptionID  string `json:"optionId,omitempty"`
	Text      string `json:"text,omitempty"`
}

// AnswerResult is the state that followed an answer.
type AnswerResult struct {
	State       string         `json:"state"`
	StateSource string         `json:"stateSource"`
	Reason      string         `json:"reason"`
	Prompt      *detect.Prompt `json:"prompt,omitempty"`
}

// ClassifyResult is a fresh verdict.
type ClassifyResult struct {
	Agent    string          `json:"agent"`
	State    string          `json:"state"`
	Outcome  string          `json:"outcome,omitempty"`
	Reason   string          `json:"reason"`
	Evidence detect.Evidence `json:"evidence"`
	Prompt   *detect.Prompt  `json:"prompt,omitempty"`
}

// StateNotification is the params of NoteState.
type StateNotification struct {
	SessionID   string         `json:"sessionId"`
	Agent       string         `json:"agent"`
	State       string         `json:"state"`
	Previous    string         `json:"previous"`
	Outcome     string         `json:"outcome,omitempty"`
	StateSource string         `json:"stateSource"`
	Reason      string         `json:"reason"`
	Since       string         `json:"since"`
	Attention   bool           `json:"attention"`
	Prompt      *detect.Prompt `json:"prompt,omitempty"`
	Message     string         `json:"message,omitempty"`
}

// OutputNotification is the params of NoteOutput. Dropped counts bytes left out
// because the editor was not reading; a repaint follows such a gap.
type OutputNotification struct {
	SessionID string `json:"sessionId"`
	Data      string `json:"data"`
	Dropped   int    `json:"dropped,omitempty"`
}

// UpdateNotification is the params of NoteUpdate: an ACP agent's update as it sent
// it. Dropped counts updates left out because the editor was not reading.
type UpdateNotification struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update,omitempty"`
	Dropped   int             `json:"dropped,omitempty"`
}

// ExitedNotification is the params of NoteExited.
type ExitedNotification struct {
	SessionID string `json:"sessionId"`
	ExitCode  int    `json:"exitCode"`
	Signal    string `json:"signal,omitempty"`
}

// The params that name a session (methods.go's onSession).

func (p SessionRef) session() string      { return p.SessionID }
func (p ResizeParams) session() string    { return p.SessionID }
func (p InputParams) session() string     { return p.SessionID }
func (p SubscribeParams) session() string { return p.SessionID }
func (p KillParams) session() string      { return p.SessionID }
func (p PromptParams) session() string    { return p.SessionID }
func (p SendParams) session() string      { return p.SessionID }
func (p AnswerParams) session() string    { return p.SessionID }

package protocol

import "encoding/json"

// The params, results and notifications of the protocol's methods.

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
	// live sessions refuses (protocol.CodeSessionsRunning).
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
	// authMethods a protocol.CodeAuthRequired error listed.
	AuthMethod string `json:"authMethod,omitempty"`
}

// ACPAgentInfo is what an ACP agent said of itself in initialize.
type ACPAgentInfo struct {
	Name    string `json:"name,omitempty"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version,omitempty"`
}

// AuthRequiredData is the data of a protocol.CodeAuthRequired error.
type AuthRequiredData struct {
	AgentInfo ACPAgentInfo `json:"agentInfo"`
	// Message is the agent's own words.
	Message     string       `json:"message"`
	AuthMethods []AuthMethod `json:"authMethods"`
}

// Session is what agentd tells about a session.
type Session struct {
	SessionID   string   `json:"sessionId"`
	Name        string   `json:"name"`
	Agent       string   `json:"agent"`
	Argv        []string `json:"argv"`
	Cwd         string   `json:"cwd"`
	Pid         int      `json:"pid"`
	Cols        int      `json:"cols"`
	Rows        int      `json:"rows"`
	State       string   `json:"state"`
	Outcome     string   `json:"outcome,omitempty"`
	StateSource string   `json:"stateSource"`
	Reason      string   `json:"reason"`
	Since       string   `json:"since"`
	Prompt      *Prompt  `json:"prompt,omitempty"`
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
	State       string  `json:"state"`
	StateSource string  `json:"stateSource"`
	Reason      string  `json:"reason"`
	Prompt      *Prompt `json:"prompt,omitempty"`
}

// ClassifyResult is a fresh verdict.
type ClassifyResult struct {
	Agent    string   `json:"agent"`
	State    string   `json:"state"`
	Outcome  string   `json:"outcome,omitempty"`
	Reason   string   `json:"reason"`
	Evidence Evidence `json:"evidence"`
	Prompt   *Prompt  `json:"prompt,omitempty"`
}

// StateNotification is the params of protocol.NoteState.
type StateNotification struct {
	SessionID   string  `json:"sessionId"`
	Agent       string  `json:"agent"`
	State       string  `json:"state"`
	Previous    string  `json:"previous"`
	Outcome     string  `json:"outcome,omitempty"`
	StateSource string  `json:"stateSource"`
	Reason      string  `json:"reason"`
	Since       string  `json:"since"`
	Attention   bool    `json:"attention"`
	Prompt      *Prompt `json:"prompt,omitempty"`
	Message     string  `json:"message,omitempty"`
}

// OutputNotification is the params of protocol.NoteOutput. Dropped counts bytes left out
// because the editor was not reading; a repaint follows such a gap.
type OutputNotification struct {
	SessionID string `json:"sessionId"`
	Data      string `json:"data"`
	Dropped   int    `json:"dropped,omitempty"`
}

// UpdateNotification is the params of protocol.NoteUpdate: an ACP agent's update as it sent
// it. Dropped counts updates left out because the editor was not reading.
type UpdateNotification struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update,omitempty"`
	Dropped   int             `json:"dropped,omitempty"`
}

// ExitedNotification is the params of protocol.NoteExited.
type ExitedNotification struct {
	SessionID string `json:"sessionId"`
	ExitCode  int    `json:"exitCode"`
	Signal    string `json:"signal,omitempty"`
}

// Target is the session a request names (rpc's onSession methods).

func (p SessionRef) Target() string      { return p.SessionID }
func (p ResizeParams) Target() string    { return p.SessionID }
func (p InputParams) Target() string     { return p.SessionID }
func (p SubscribeParams) Target() string { return p.SessionID }
func (p KillParams) Target() string      { return p.SessionID }
func (p PromptParams) Target() string    { return p.SessionID }
func (p SendParams) Target() string      { return p.SessionID }
func (p AnswerParams) Target() string    { return p.SessionID }

// UpgradeParams name the binary to hand over to.
type UpgradeParams struct {
	// Binary is the new agentd's absolute path.
	Binary string `json:"binary"`
	// Auto: a client that found this daemon older asks on its own (not a
	// person's agentd upgrade); a version that cannot be ordered is then
	// refused rather than trusted.
	Auto bool `json:"auto,omitempty"`
}

// UpgradeRecord is the last handover this daemon took part in.
type UpgradeRecord struct {
	From  string `json:"from"`
	To    string `json:"to"`
	At    string `json:"at"`              // when the sessions were frozen
	Error string `json:"error,omitempty"` // set when it failed and this code came back
	// PausedMs is how long the sessions stood still: from the freeze until
	// this code had adopted them and read their PTYs again.
	PausedMs int64 `json:"pausedMs"`
	// Settling: the code before still watches this code, and should it
	// end now, takes the sessions back (docs/upgrade.md, "If the new code
	// dies"). agentd upgrade waits for it to be over before it says the
	// upgrade succeeded.
	Settling bool `json:"settling,omitempty"`
}

// Prompt is a question on screen waiting for a person, as clients see it.
type Prompt struct {
	// ID is the promptId an answer carries: it names one appearance of
	// the prompt in one session, and no other session takes it.
	ID       string   `json:"promptId"`
	Kind     string   `json:"kind"`
	Question string   `json:"question"`
	Subject  *Subject `json:"subject,omitempty"`
	Options  []Option `json:"options"`
	Freeform bool     `json:"freeform"`
}

// Option is one answer a prompt offers.
type Option struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	// Kind is "allow" or "reject" where the agent's rules tell them apart.
	Kind     string `json:"kind,omitempty"`
	Selected bool   `json:"selected,omitempty"`
}

// Subject is what a prompt asks the person to approve.
type Subject struct {
	// Kind: command, edit, path, url, folder, tool, ... (docs/protocol.md).
	Kind string `json:"kind"`
	// Text is one line: the command, path, URL, folder or tool name.
	Text string `json:"text"`
	// Detail is more, bounded in rows: the whole multi-line command, an
	// edit's diff, a fetch's prompt, an MCP tool's arguments.
	Detail string `json:"detail,omitempty"`
	// Truncated: agentd could not see all of it.
	Truncated bool `json:"truncated,omitempty"`
}

// Evidence is the screen text a verdict rests on.
type Evidence struct {
	Region string `json:"region,omitempty"`
	Text   string `json:"text,omitempty"`
}

// AuthMethod is one way to log in that an ACP agent offers.
type AuthMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Type is "agent", "env_var" or "terminal" (ACP's).
	Type    string            `json:"type"`
	Vars    []string          `json:"vars,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Label   string            `json:"label,omitempty"`
}

// Option is the prompt's option whose id is id.
func (p *Prompt) Option(id string) (Option, bool) {
	for _, o := range p.Options {
		if o.ID == id {
			return o, true
		}
	}
	return Option{}, false
}

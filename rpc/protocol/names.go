// Package protocol is the agentd editor protocol's names: its version,
// the methods and notifications, and the error codes. It is the one
// declaration every client builds on: the Go server and clients use it,
// and `go generate` writes the VS Code extension's and the Neovim
// plugin's copies from it (internal/gen); a test fails when those differ from
// what this declares. docs/protocol.md is the reference for each.
package protocol

//go:generate go run ./internal/gen

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
	// CodeUpgradeRefused: the handover did not start, or failed before the
	// new code took over; every session still runs here.
	CodeUpgradeRefused = -32044
)

// The methods agentd serves. rpc's methodTable serves each: its params
// and result types (from its handler's signature), how its params are
// read, and how it is scheduled.
const (
	MethodInitialize = "initialize"
	MethodShutdown   = "shutdown"
	// MethodExit is the notification that closes the connection after
	// shutdown; it is never answered.
	MethodExit = "exit"
	// MethodHello is what a forwarder or the CLI sends first on the
	// daemon's socket: who it is and the environment sessions it asks for
	// should run in.
	MethodHello = "agentd/hello"
	// MethodStop ends the daemon (agentd stop).
	MethodStop = "agentd/stop"
	// MethodUpgrade asks the daemon to hand its sessions to another agentd
	// binary (agentd upgrade; docs/upgrade.md). A daemon that hands over
	// does not answer: its process becomes the new binary, every
	// connection closes, and the client sees the new daemon when it
	// connects again. Any answer is a refusal, and says why; the sessions
	// then run on under this daemon.
	MethodUpgrade = "agentd/upgrade"
	// MethodFocus is client/focus: whether the person is looking at this
	// client now. Desktop notices are raised only while no client is
	// focused.
	MethodFocus     = "client/focus"
	MethodSpawn     = "session/spawn"
	MethodList      = "session/list"
	MethodRead      = "session/read"
	MethodResize    = "session/resize"
	MethodInput     = "session/input"
	MethodSubscribe = "session/subscribe"
	MethodSeen      = "session/seen"
	MethodKill      = "session/kill"
	MethodClassify  = "session/classify"
	MethodCapture   = "session/capture"
	MethodPrompt    = "session/prompt"
	MethodCancel    = "session/cancel"
	MethodSend      = "runtime_send"
	MethodAnswer    = "runtime_answer"
)

// The notifications agentd sends, each with its params type.
const (
	NoteState  = "session/state"  // StateNotification, to every client
	NoteOutput = "session/output" // OutputNotification, to the session's subscribers
	NoteUpdate = "session/update" // UpdateNotification, to every client
	NoteExited = "session/exited" // ExitedNotification, to every client
)

package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Handler receives what the agent does. Its methods are called one at a
// time, in the order things happened (updates and permission requests in
// wire order, a permission's settlement before anything the agent sent
// after the answer, Exited last), from a goroutine of the Client's own.
// They may call the Client's methods (Answer, Cancel, Pending, Close), but
// should not block for long: later events wait behind them.
type Handler interface {
	// Update is one session/update notification.
	Update(u Update)
	// Permission is a session/request_permission waiting for Answer.
	Permission(p Permission)
	// PermissionSettled says a permission is no longer pending and why.
	PermissionSettled(s Settled)
	// Exited is called once, last, when the agent's process is gone.
	Exited(e Exit)
}

// HandlerFuncs is a Handler made of optional functions.
type HandlerFuncs struct {
	OnUpdate            func(Update)
	OnPermission        func(Permission)
	OnPermissionSettled func(Settled)
	OnExited            func(Exit)
}

func (h HandlerFuncs) Update(u Update) {
	if h.OnUpdate != nil {
		h.OnUpdate(u)
	}
}

func (h HandlerFuncs) Permission(p Permission) {
	if h.OnPermission != nil {
		h.OnPermission(p)
	}
}

func (h HandlerFuncs) PermissionSettled(s Settled) {
	if h.OnPermissionSettled != nil {
		h.OnPermissionSettled(s)
	}
}

func (h HandlerFuncs) Exited(e Exit) {
	if h.OnExited != nil {
		h.OnExited(e)
	}
}

// Update is one session/update. Raw is the notification's "update" object
// exactly as the agent sent it (forward it to editors as it is); the other
// fields are read from it for convenience.
type Update struct {
	SessionID string
	// Kind is the update's "sessionUpdate" discriminator as sent:
	// agent_message_chunk, agent_thought_chunk, user_message_chunk,
	// tool_call, tool_call_update, plan, available_commands_update,
	// current_mode_update, … (agents add their own; nothing is dropped).
	Kind string
	Raw  json.RawMessage
	// Text is the text of a *_message_chunk / agent_thought_chunk whose
	// content is a text block.
	Text string
	// ToolCall, for tool_call and tool_call_update, is the call's state
	// after this update (fields merged over the call's earlier updates).
	ToolCall *ToolCall
	// NewToolCall is true the first time a toolCallId is seen. Agents send
	// tool_call more than once for one id (Claude Code ACP does); only the
	// first is new, the others are updates.
	NewToolCall bool
}

// ToolCall is what is known about one tool call.
type ToolCall struct {
	ID     string
	Title  string
	Kind   string // read, edit, delete, move, search, execute, think, fetch, switch_mode, other
	Status string // pending, in_progress, completed, failed
	// RawInput is the call's input as the agent sent it (a command, a
	// path, a URL…), and Paths the files its "locations" name.
	RawInput json.RawMessage
	Paths    []string
	// Diffs are the file changes its content shows.
	Diffs []Diff
}

// Diff is a tool call's proposed change to one file (ACP's "diff"
// content): OldText is empty for a new file.
type Diff struct {
	Path    string `json:"path"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// Permission is a session/request_permission the agent is waiting on.
type Permission struct {
	// Key identifies this request among the pending ones; it stays the same
	// for the request's whole life and is never reused by this Client.
	Key       string
	SessionID string
	// ToolCallID, Title and Kind describe the tool call asking; Title and
	// Kind come from the request, or from the tool call's earlier updates
	// when the request leaves them out.
	ToolCallID string
	Title      string
	Kind       string
	// RawInput and Paths are the tool call's input and files, from the
	// request or the call's earlier updates (see ToolCall).
	RawInput json.RawMessage
	Paths    []string
	Diffs    []Diff
	// Options are the agent's own choices, in its order. Answer with one
	// of their IDs; never assume particular IDs (every agent names its own).
	Options []Option
	// Raw is the request's params as sent.
	Raw   json.RawMessage
	Since time.Time
}

// Option is one of a permission request's choices, verbatim.
type Option struct {
	ID   string `json:"optionId"`
	Name string `json:"name"`
	// Kind is allow_once, allow_always, reject_once or reject_always.
	Kind string `json:"kind"`
}

// Settled says how a permission request ended.
type Settled struct {
	Key string
	// Reason is SettledAnswered, SettledCancelled, SettledTimeout or
	// SettledExited.
	Reason string
	// Outcome is what the agent was told: "selected" (with OptionID) or
	// "cancelled"; empty when the agent exited before an answer.
	Outcome  string
	OptionID string
}

// Reasons a permission stopped pending.
const (
	SettledAnswered  = "answered"  // Answer chose an option
	SettledCancelled = "cancelled" // Cancel (or Close) answered it "cancelled"
	SettledTimeout   = "timeout"   // PermissionTimeout passed; the agent's reject option was sent
	SettledExited    = "exited"    // the agent went away first
)

// Exit describes the end of the agent's process.
type Exit struct {
	// Code is the exit code, -1 when a signal ended the process.
	Code int
	// Signal names the signal that ended it (e.g. "SIGKILL"), if any.
	Signal string
	// Err is nil after an exit with code 0, else why the agent ended.
	Err error
}

// AgentInfo is what the agent said about itself in initialize.
type AgentInfo struct {
	Name, Title, Version string
	ProtocolVersion      int
	// AuthMethods are the ways the agent offered to log in, in its order.
	AuthMethods []AuthMethod
	// AuthMethod is the method Start authenticated with, when the agent
	// asked for it (session/new answered auth_required); else empty.
	AuthMethod string
	// Capabilities is initialize's agentCapabilities as sent.
	Capabilities json.RawMessage
}

// AuthMethod is one way to log in that an agent offers in initialize.
type AuthMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Type is "agent" (the agent logs in itself when authenticate names
	// this method), "env_var" (set Vars and authenticate) or "terminal"
	// (a person runs Command with Args, and Env added, in a terminal; then
	// authenticate).
	Type string   `json:"type"`
	Vars []string `json:"vars,omitempty"`
	// Command, Args and Env run a terminal login. Command is the agent's
	// own program for ACP's "terminal" type; agents that predate it put
	// the whole command in _meta["terminal-auth"].
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Label is the agent's name for the login terminal, if it gave one.
	Label string `json:"label,omitempty"`
}

// AuthRequiredError is an agent refusing to work until someone logs in:
// at start (session/new) when no method could be chosen, or in the middle
// of a session (a prompt answered auth_required). Methods are the ways it
// offers.
type AuthRequiredError struct {
	Agent AgentInfo
	// Message is the agent's own words.
	Message string
	Methods []AuthMethod
	// Step is where it was refused: "session/new" or "session/prompt".
	Step string
}

// Who names the agent for a person: its title, else its name.
func (e *AuthRequiredError) Who() string {
	switch {
	case e.Agent.Title != "":
		return e.Agent.Title
	case e.Agent.Name != "":
		return e.Agent.Name
	}
	return "the agent"
}

// MethodIDs are the ids of the methods offered, in order.
func (e *AuthRequiredError) MethodIDs() []string {
	ids := make([]string, len(e.Methods))
	for i, m := range e.Methods {
		ids[i] = m.ID
	}
	return ids
}

func (e *AuthRequiredError) Error() string {
	msg := fmt.Sprintf("acp: %s requires authentication at %s (%s)", e.Who(), e.Step, e.Message)
	if len(e.Methods) > 0 {
		msg += fmt.Sprintf("; choose an authMethod of %q", e.MethodIDs())
	}
	return msg
}

// LoginNeededError is Start asked to use a terminal login (Method) that
// has not run: a person must run Method.Command in a terminal, then Start
// again with Options.LoggedIn.
type LoginNeededError struct {
	Agent  AgentInfo
	Method AuthMethod
}

func (e *LoginNeededError) Error() string {
	return fmt.Sprintf("acp: %s logs in in a terminal: run %q %q, then start again", e.Agent.Name, e.Method.Command, e.Method.Args)
}

// Errors the Client returns (compare with errors.Is).
var (
	ErrUnknownPermission = errors.New("acp: no pending permission with that key")
	ErrUnknownOption     = errors.New("acp: the permission has no such option")
	ErrBusy              = errors.New("acp: a prompt turn is already running")
	ErrExited            = errors.New("acp: the agent has exited")
)

// Outcome maps a prompt turn's stopReason to agentd's done outcome:
// end_turn → completed; cancelled → interrupted; refusal, max_tokens,
// max_turn_requests and a failed turn ("", Prompt returned an error) →
// failed; a stopReason this package does not know → unknown.
func Outcome(stopReason string) string {
	switch stopReason {
	case "end_turn":
		return "completed"
	case "cancelled":
		return "interrupted"
	case "refusal", "max_tokens", "max_turn_requests", "":
		return "failed"
	}
	return "unknown"
}

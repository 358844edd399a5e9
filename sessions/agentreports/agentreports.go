// Package agentreports reads what agents say of themselves in their own
// structured formats: the hooks agentd gives an agent for one launch and
// the reports those hooks send back, and the logs an agent keeps. Each
// format is keyed by the name a manifest gives it under [reports]
// (detect.Manifest.Reports: hooks = "claude-settings", log =
// "codex-rollout"), in the tables below, so adding an agent's format
// touches this package and its manifest only. The session core
// (package sessions) asks for a format by that name and turns what it
// reads into its own reports.
//
// detect, where the manifests live, is pure (no file or process I/O);
// reading a log is neither, which is why these are not there.
package agentreports

import (
	"encoding/json"
	"time"

	"github.com/agentd/agentd/detect"
)

// Hooks is a kind of hooks agentd gives an agent for one launch, whose
// commands run `agentd report EVENT` with the event's payload.
type Hooks struct {
	// Args are the arguments that give the agent the hooks, which run
	// self (agentd's executable) as `self report EVENT`.
	Args func(self string) []string
	// Read reads one report those hooks sent.
	Read func(event string, payload json.RawMessage) (Reading, error)
}

// Reading is what one hook report says.
type Reading struct {
	// OK is false for a valid report that says nothing about state.
	OK bool
	// Record is the state reported, a program-status record (its App is
	// the caller's to set).
	Record detect.StatusRecord
	// Background: the report names work the agent started that still runs
	// (a turn's end while a subagent works on).
	Background bool
	// Tool is the tool call the report asks approval for, or is about to
	// run; nil when it names none.
	Tool *Tool
}

// Tool is a tool call as a hook reports it.
type Tool struct {
	Name  string
	Input json.RawMessage
}

// hooks are the kinds of hooks agentd gives, by manifest name.
var hooks = map[string]Hooks{
	detect.HooksClaudeSettings: {Args: claudeSettings, Read: readClaudeHook},
}

// DefaultHooks is the format a hook report is read in when the session's
// manifest names no kind of hooks: `agentd report` run by hand or from a
// person's own settings speaks Claude Code's, the only one it has spoken.
const DefaultHooks = detect.HooksClaudeSettings

// HooksFor is the kind of hooks a manifest names (Reports.Hooks); ok is
// false for "" and for a kind agentd does not give.
func HooksFor(kind string) (h Hooks, ok bool) {
	h, ok = hooks[kind]
	return h, ok
}

// Log follows one session's agent's own log.
type Log interface {
	// Poll reads what the agent appended since the last look and returns
	// its newest turn event, if any. A look that is not due yet reads
	// nothing and returns how long until it is.
	Poll(sessionID string) (ev *Event, wait time.Duration)
	// Release lets go of the log once the session has ended.
	Release()
}

// Event is a turn event an agent logged.
type Event struct {
	Reason  string              // e.g. "log.task_complete"
	At      time.Time           // when it happened, where the line says; zero otherwise
	Record  detect.StatusRecord // the state it means
	Outcome string              // for a turn's end, how it ended
}

// logs are the agents' logs agentd reads, by manifest name: each opens
// the log of a session started at started in cwd with env, or returns nil
// when there is none to look for.
var logs = map[string]func(env []string, cwd string, started time.Time) Log{
	detect.LogCodexRollout: openCodexRollout,
}

// OpenLog is the log of the kind a manifest names (Reports.Log) for a
// session, or nil: the kind is "" or unknown, or the session has no such
// log to look for.
func OpenLog(kind string, env []string, cwd string, started time.Time) Log {
	open, ok := logs[kind]
	if !ok {
		return nil
	}
	return open(env, cwd, started)
}

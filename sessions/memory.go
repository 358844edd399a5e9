package sessions

// A handover (agentd upgrade) moves every session to new code: the
// machine's memory goes with it, so that a prompt keeps its promptId, a
// finished turn stays seen or unseen, and an answer given stays given.
// What is carried is decided here, field by field: MachineMemory holds
// what goes, machineForgets names what does not and why, and
// TestEveryMachineFieldIsCarriedOrForgotten fails on a machine field that
// is in neither, so a new field is never dropped by accident.

// MachineMemory is the part of a session's machine a handover carries. Its
// JSON names are the snapshot's (SessionSnapshot embeds it), as agentd has
// written them since handovers began.
type MachineMemory struct {
	State    State  `json:"state"`
	Revision uint64 `json:"revision"`
	Seen     bool   `json:"seen"`
	Task     bool   `json:"task"`
	InputRaw bool   `json:"inputRaw"`
	Ready    bool   `json:"ready"`
	Answered string `json:"answered,omitempty"`
	TypedAt  string `json:"typedAt,omitempty"`
	PromptID string `json:"promptId,omitempty"`
	// Appearances, Current and Shown carry the prompt appearance on
	// screen, and Salt the session's promptId salt, so its promptId
	// outlives the handover.
	Appearances uint64 `json:"appearances,omitempty"`
	Salt        string `json:"promptSalt,omitempty"`
	Current     uint64 `json:"current,omitempty"` // the appearance on screen
	Shown       string `json:"shown,omitempty"`
}

// machineForgets are the machine's fields a handover does not carry, and
// why: each is either carried otherwise, or only holds for a moment that
// the new code sees afresh.
var machineForgets = map[string]string{
	"ended":          "the snapshot's Exited says it",
	"promptAt":       "when the prompt came, for a wait the new code starts afresh",
	"stretch":        "prompts since the state turned blocked: a redraw after the handover is a new look",
	"recent":         "past appearances, which name what a stale answer was for: one older than the handover is refused without that name",
	"toolSubject":    "the agent's reports are not carried: its next hook or signal reports again",
	"toolSeq":        "with toolSubject",
	"goneSeq":        "with toolSubject",
	"drift":          "a log line not yet written",
	"driftFor":       "with drift",
	"shownTool":      "with toolSubject",
	"timedOut":       "ACP sessions do not move (ErrACPRunning)",
	"rawAt":          "the terminal's mode is looked at again",
	"screenState":    "the screen is read again from the repaint",
	"screenMovedAt":  "with the reports",
	"genericSeen":    "the generic reader's hold starts again on the repainted screen",
	"genericAt":      "with genericSeen",
	"disagreeSince":  "a drift window starts again",
	"disagreeSeq":    "with disagreeSince",
	"keptSeq":        "with disagreeSince",
	"screenDrift":    "a screen not yet kept",
	"watchCPU":       "a busy window starts again",
	"busyFrom":       "with watchCPU",
	"busyCPU":        "with watchCPU",
	"busyKept":       "with watchCPU",
	"report":         "reports come again from hooks, signals and OSC 7501",
	"reportSeq":      "with report",
	"oscSeq":         "the terminal is new and counts afresh",
	"promptShownSeq": "with report",
	"answeredSeq":    "with report",
	"outlivedSeq":    "with report",
}

// memory is what a handover carries of m.
func (m *machine) memory() MachineMemory {
	return MachineMemory{
		State: m.state, Revision: m.revision, Seen: m.seen, Task: m.task, InputRaw: m.inputRaw, Ready: m.ready,
		Answered: m.answered, TypedAt: m.typedAt, PromptID: m.promptID,
		Appearances: m.appearances, Salt: m.salt, Current: m.current, Shown: m.shown,
	}
}

// restoreMachine is a machine made again from its memory; ended says the
// session's process had exited.
func restoreMachine(mem MachineMemory, ended bool) machine {
	return machine{
		state: mem.State, revision: mem.Revision, ended: ended,
		seen: mem.Seen, task: mem.Task, inputRaw: mem.InputRaw, ready: mem.Ready,
		answered: mem.Answered, typedAt: mem.TypedAt, promptID: mem.PromptID,
		appearances: mem.Appearances, salt: mem.Salt, current: mem.Current, shown: mem.Shown,
	}
}

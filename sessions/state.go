package sessions

import (
	"time"

	"github.com/agentd/agentd/detect"
)

// States a session reports. The detect states plus exited.
const (
	Working = detect.StateWorking
	Blocked = detect.StateBlocked
	Idle    = detect.StateIdle
	Done    = detect.StateDone
	Error   = detect.StateError
	Exited  = "exited"
)

// Sources say where a state came from, so a client can tell a guess from a fact.
const (
	SourceScreen  = "screen"
	SourceOSC     = "osc"
	SourceHook    = "hook"
	SourceACP     = "acp"
	SourceLog     = "log"
	SourceProcess = "process"
)

// State is a session's decided state.
type State struct {
	// Agent is the agent whose rules decided: a shell session takes the
	// name of the agent running in it.
	Agent   string
	Name    string
	Outcome string // done only: completed, failed, interrupted, unknown
	Source  string
	Reason  string
	Since   time.Time
	Prompt  *detect.Prompt
	// Message is the agent's own words for an error, where it gave any.
	Message string
}

// key is what must change for a state notification to be sent.
func (s State) key() string {
	k := s.Agent + "\x00" + s.Name + "\x00" + s.Outcome
	if s.Prompt != nil {
		k += "\x00" + s.Prompt.ID
	}
	return k
}

// evidence is everything known about a session at one moment. decide turns
// it into a State; it is the one place that combines sources.
type evidence struct {
	screen  detect.Verdict
	report  *report // the newest report the agent made of itself, nil when none
	current State   // the state reported so far
	seen    bool    // the person saw the end of the current turn
	task    bool    // the person gave the agent work since it last read idle
	// starting: the agent's rules can recognise its ready screen and have
	// not yet matched anything, nor has it reported a state.
	starting bool
	// knowsIdle: the agent's rules can recognise its ready screen.
	knowsIdle bool
	// lineMode: the screen reads idle but the terminal is still in line
	// mode, as it is before a full-screen agent takes its input raw (or
	// left it less than the manifest's input.ready_after ago).
	lineMode bool
	// fg is what the process table says runs in a shell session.
	fg foreground
}

// report is a state an agent reported itself: an OSC 7501 record, a hook,
// or a signal.
type report struct {
	source string // SourceOSC or SourceHook
	reason string // e.g. "osc7501", "hook.Stop", "signal.working"
	rec    *detect.StatusRecord
	// outcome, for a done report, when the reporter says how the turn ended.
	outcome string
	// subject is what the tool call reported asks to approve (a hook's
	// tool_input), when the report is about one.
	subject *detect.Subject
	seq     uint64
	// at is when the event happened, where its source says (a log line's
	// timestamp); received is when agentd took the report in.
	at, received time.Time
}

// decide combines the evidence, strongest first: a blocker visible on the
// screen; then a fresh authoritative report (OSC 7501, hook, signal); then
// the shell in the foreground; then the other screen rules. Then the session's own bookkeeping: a finished turn stays
// done until the person has seen it.
func decide(e evidence) State {
	st := fromScreen(e.screen)
	if e.screen.State != detect.StateBlocked && e.report != nil && e.report.rec != nil {
		// A report of idle while the screen shows how the turn ended says
		// less than the screen: keep the screen's done and its outcome. So
		// does a report of the turn's end (a Stop hook) while the screen
		// shows it ended on an error.
		if rep, ok := fromReport(*e.report, e.screen); ok && !(rep.Name == Idle && st.Name == Done) &&
			!((rep.Name == Idle || rep.Name == Done) && st.Name == Error) {
			st = rep
		}
	}
	switch {
	case e.fg.shell && st.Name != Blocked && st.Source == SourceScreen:
		// The shell waits for a command: whatever an agent left on screen
		// no longer counts.
		return State{Name: Idle, Source: SourceProcess, Reason: "process.shell_foreground"}
	case e.fg.job && st.Name == Idle && st.Source == SourceScreen:
		return State{Name: Working, Source: SourceProcess, Reason: "process.foreground_job"}
	}
	if (e.starting && e.screen.Unmatched() || e.lineMode) && st.Source == SourceScreen && st.Name == Idle {
		// A half-drawn start-up screen, or a composer the agent does not
		// read yet, is not an agent waiting for a task: input typed now
		// would be lost.
		return e.current
	}
	if e.knowsIdle && e.current.Name == Working && st.Source == SourceScreen && st.Name == Idle && e.screen.Unmatched() {
		// Between two frames of a turn (a tool's rows gone, the dialog
		// that follows not drawn yet) no rule holds. Rules that know the
		// agent's ready screen did not see it: the turn goes on. (Gemini
		// drew such a screen for a moment before its plan approval, and
		// the session read done.)
		return e.current
	}
	if e.knowsIdle && e.current.Name == Blocked && st.Source == SourceScreen && st.Name == Idle && e.screen.Unmatched() {
		// The prompt has just gone and the next frame is not drawn yet:
		// an answered prompt resumes the turn. Rules that know the ready
		// screen did not see it, so the turn has not ended (Copilot's box
		// leaves a frame before its tool row; done there came before the
		// approved command ran).
		return State{Name: Working, Source: SourceScreen, Reason: e.screen.Reason}
	}
	prev := e.current.Name
	switch st.Name {
	case Idle:
		// A turn that ended without a completion line on screen is still a
		// turn that ended; and a report of idle does not mean the person
		// saw the result. Without a task there was no turn: an agent
		// busy at start-up, or a first-run page answered, is idle.
		if !e.seen && e.task && (prev == Working || prev == Blocked) {
			st = State{Name: Done, Outcome: "unknown", Source: st.Source, Reason: st.Reason}
		} else if !e.seen && prev == Done {
			st = e.current
		}
	case Done:
		if e.seen {
			st = State{Name: Idle, Source: st.Source, Reason: st.Reason}
		}
	}
	return st
}

func fromScreen(v detect.Verdict) State {
	st := State{Name: v.State, Source: SourceScreen, Reason: v.Reason, Prompt: v.Prompt}
	if v.State == detect.StateDone {
		st.Outcome = v.Outcome
	}
	if v.State == detect.StateError {
		st.Message = v.Message
	}
	if v.State != detect.StateBlocked {
		st.Prompt = nil
	}
	return st
}

// fromReport maps a report. A blocked report with no readable prompt on
// screen is still blocked: its message is the question and only free text
// or keys can answer it.
func fromReport(rep report, screen detect.Verdict) (State, bool) {
	r := *rep.rec
	st := State{Source: rep.source, Reason: rep.reason}
	if rep.source == SourceOSC {
		st.Reason = "osc7501." + r.State
	}
	switch r.State {
	case "working", "idle":
		st.Name = r.State
	case "error":
		st.Name, st.Message = Error, r.Message
	case "done":
		st.Name, st.Outcome = Done, "completed"
		switch {
		case rep.outcome != "":
			st.Outcome = rep.outcome
		case screen.State == detect.StateDone && screen.Outcome != "":
			st.Outcome = screen.Outcome
		}
	case "blocked":
		kind := r.Kind
		if kind == "" {
			kind = "permission"
		}
		if kind == "auth" {
			// "Not logged in · Please run /login", "Invalid API key": no
			// option on screen to pick (a readable one would have won
			// above), the person has to fix a login, and the agent cannot
			// go on until then: design.md's error, login required.
			st.Name = Error
			if rep.source == SourceOSC {
				st.Reason = "osc7501.auth"
			}
			return st, true
		}
		st.Name = Blocked
		st.Prompt = &detect.Prompt{Kind: kind, Question: r.Message, Options: []detect.Option{}, Freeform: true}
		st.Prompt.Seal()
	default:
		return st, false
	}
	return st, true
}

package sessions

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/agentd/agentd/detect"
)

// machine is a session's decision: everything a decision remembers between
// two looks, and step, the one method that advances it. A live PTY
// session, an ACP session, Simulate, the replays and the bench all decide
// through it, so a state the bench or a replay computes is the state a
// live session would report on the same screens.
//
// machine does no I/O and reads no clock: what a driver found (a verdict,
// a report, the process table, the terminal's mode, the time) comes in as
// facts, and the caller schedules any second look step asks for. It is
// guarded by its session's mu.
type machine struct {
	state    State
	revision uint64 // counts published changes of state
	ended    bool   // the process exited: the state is final

	// What the person and agentd did.
	seen bool // the person saw the end of the current turn
	// task: the person gave the agent work since the session last read
	// idle (text sent, or keys typed while no prompt waited). Answering a
	// prompt is not a task: a folder-trust or first-run page answered
	// before any work leaves the agent idle, not done.
	task     bool
	answered string // the promptId last answered, until it leaves the screen
	typedAt  string // the prompt a person typed at, by promptId
	promptID string // the last prompt seen
	promptAt time.Time
	// appearances counts the prompts that came onto the screen; shown is
	// the Content of the one on it now. A prompt's ID names its
	// appearance, so an answer meant for one is never taken by the next,
	// even where the two read the same.
	appearances uint64
	shown       string
	current     uint64 // the number of the appearance on screen
	// salt is the session's own, random: two sessions that show the same
	// prompt (the same agent asking the same thing, here or on another
	// machine) give it different promptIds, so an answer bound to one can
	// never be taken by the other. Empty (the IDs of older agentd) where
	// a session came from a daemon that had none.
	salt string
	// stretch maps the prompts shown since the state turned blocked, with
	// no key typed since, to their appearance: a prompt drawn again after a
	// frame of something else (a resize reflowing the old screen, a redraw
	// in two writes) is the same appearance, where nothing could have
	// answered it.
	stretch map[string]uint64
	recent  []*detect.Prompt // the last few appearances, newest last
	// toolSubject is what the tool call the agent last reported (a hook's
	// tool_input) asks to approve, and toolSeq that report's seq; goneSeq
	// is the newest report's seq when a prompt last left the screen. A
	// reported tool call newer than that is the one the prompt on screen
	// asks about, and its subject is the authoritative one.
	toolSubject     *detect.Subject
	toolSeq         uint64
	goneSeq         uint64
	drift, driftFor string // a disagreement to log, and the prompt it was about
	shownTool       string // the reported tool call's text when the appearance began
	// timedOut: an ACP permission nobody answered in time was answered
	// with the agent's reject option; the turn's state says so until the
	// next permission or the turn's end.
	timedOut bool

	// What the screen said.
	ready bool // a rule matched or the agent reported a state
	// inputRaw: the agent's terminal has been seen out of line mode once;
	// after that its mode is not looked at again. rawAt is when.
	inputRaw      bool
	rawAt         time.Time
	screenState   string // the screen's last verdict
	screenMovedAt uint64 // the newest report's seq when that verdict came
	// genericSeen names the generic reader's blocking or turn-ending
	// verdict on screen now, and genericAt when it came (holdGeneric).
	genericSeen string
	genericAt   time.Time
	// disagreeSince is when the newest report (of seq disagreeSeq) and the
	// screen began to disagree (noteScreenDrift); keptSeq names the report
	// whose disagreement was last kept, and screenDrift says why the
	// screen is to be kept, until the session takes it.
	disagreeSince        time.Time
	disagreeSeq, keptSeq uint64
	screenDrift          string
	// watchCPU: the screen reads idle with no report to say otherwise, so
	// the driver reads the agent's CPU time (facts.cpu) for noteBusyDrift;
	// busyFrom and busyCPU are where the window it averages over began,
	// and busyKept says this stretch's screen was kept already.
	watchCPU bool
	busyFrom time.Time
	busyCPU  time.Duration
	busyKept bool

	// What the agent reported of itself. reportSeq numbers the reports;
	// oscSeq is the terminal's count of OSC 7501 records already taken in;
	// promptShownSeq and answeredSeq name the report that was newest when
	// its prompt was on screen, and when agentd answered it.
	report                      *report
	reportSeq, oscSeq           uint64
	promptShownSeq, answeredSeq uint64
	// outlivedSeq names a report of the turn's end made while the screen
	// showed the agent's background work running on: that work outlived
	// it, and it says nothing more.
	outlivedSeq uint64
}

// facts is what a session's driver found at one moment: the evidence one
// step decides on.
type facts struct {
	rules *detect.Manifest // the rules in use (a shell session follows its foreground)
	agent string           // the agent name the state carries
	now   time.Time

	// A terminal session's screen.
	screen    detect.Verdict
	status    *detect.StatusRecord // the newest OSC 7501 record the terminal took in
	statusSeq uint64               // the terminal's count of those records
	// canonical: the terminal is still in line mode (it cannot tell for a
	// screen with no terminal, a replay's).
	canonical bool
	fg        foreground // what runs in a shell session
	// cpu is the CPU time the processes of the agent's terminal session
	// have used, read (cpuRead) only while the machine watches it.
	cpu     time.Duration
	cpuRead bool
	// cpuAt is when cpu was read, which may be a while before now: a look
	// uses the reading taken since the last one (ptyDriver.readCPU), and
	// one walk of the process table serves every session (sessionCPU).
	cpuAt time.Time

	// An ACP session's protocol state, instead of a screen.
	acp *acpFacts

	// event, instead of all the above, is what happened to the session
	// between two looks (the events at the end of this file): step takes
	// it into the memory and decides nothing.
	event *event
}

// acpFacts is what the ACP client says of the session.
type acpFacts struct {
	pending    *detect.Prompt // the oldest pending permission, nil when none
	turn       bool           // a prompt is in flight
	ended      bool           // a turn has ended since the last prompt
	outcome    string         // how it ended
	authNeeded string         // the agent refused the last prompt for want of a login
}

// readyRecheck is how soon a session whose composer is drawn but whose
// terminal is still in line mode looks again.
const readyRecheck = 50 * time.Millisecond

// genericHold is how long the generic reader's blocked or error must stay
// on a screen that does not change before the session takes it. The
// agents' own rules know their whole frames; the generic reader does not,
// and a frame drawn in two writes (an error row before the retry row under
// it) reads like a finished one in between.
const genericHold = 700 * time.Millisecond

func newMachine(st State) machine { return machine{state: st} }

// step advances the decision on f. It returns the state, whether it is a
// change to publish, and, when the facts may change without output (the
// terminal leaving line mode, an input.ready_after delay), how soon the
// caller should look again.
//
// step is the one writer of the machine's memory: what happens between two
// looks comes in as an event (f.event), which step hands to take.
func (m *machine) step(f facts) (State, bool, time.Duration) {
	if f.event != nil {
		st, changed := m.take(*f.event, f.now)
		return st, changed, 0
	}
	if m.ended {
		return m.state, false, 0
	}
	var next State
	var again time.Duration
	if f.acp != nil {
		if f.acp.pending != nil || !f.acp.turn {
			m.timedOut = false
		}
		next = decideACP(*f.acp, m.seen, m.timedOut)
	} else {
		next, again = m.stepScreen(f)
	}
	next.Agent = f.agent
	next.Message, _ = detect.CleanText(next.Message, 500) // an agent's words, untrusted
	if f.acp == nil {
		// (An ACP request's own key already makes each appearance its own.)
		next.Prompt = m.appearance(next.Name, m.withToolSubject(next))
	}
	if m.answered != "" && (next.Prompt == nil || next.Prompt.ID != m.answered) {
		m.answered = ""
	}
	if next.Name == Working || next.Name == Blocked {
		m.seen = false
	}
	if next.Name == Idle && m.state.Name != Idle {
		// The turn is over and seen (or there was none): the next one
		// needs a task of its own. Not while idle, where a task just sent
		// still shows as a draft in the composer.
		m.task = false
	}
	if next.Prompt != nil && next.Prompt.ID != m.promptID {
		m.promptID, m.promptAt = next.Prompt.ID, f.now
	}
	st, changed := m.set(next, f.now)
	return st, changed, again
}

// appearance is the prompt p of a state named name, named for its
// appearance: the one on screen since the last step, or a new one when the
// state was not blocked on the same Content. A redraw, a resize or a
// spinner keeps the appearance; the prompt leaving the screen (answered
// here, in the terminal or anywhere else) ends it.
func (m *machine) appearance(name string, p *detect.Prompt) *detect.Prompt {
	if name != Blocked || p == nil {
		if m.state.Name == Blocked {
			m.goneSeq = m.reportSeq
		}
		m.shown, m.shownTool, m.stretch = "", "", nil
		return p
	}
	if m.state.Name != Blocked || m.state.Prompt == nil {
		m.stretch = nil
	}
	// A tool call reported since this appearance began, about something
	// else, is a new prompt even where the screen reads the same (a command
	// too long to show, cut alike).
	newCall := m.toolSubject != nil && m.toolSeq > m.goneSeq && m.shownTool != "" && m.toolSubject.Text != m.shownTool
	if m.state.Name != Blocked || m.state.Prompt == nil || m.shown != p.Content || newCall {
		if n, ok := m.stretch[p.Content]; ok && !newCall {
			m.current = n
		} else {
			m.appearances++
			m.current = m.appearances
		}
		m.shown, m.shownTool = p.Content, ""
		if m.stretch == nil || len(m.stretch) >= recentPrompts {
			m.stretch = map[string]uint64{}
		}
		m.stretch[p.Content] = m.current
	}
	if m.toolSubject != nil && m.toolSeq > m.goneSeq && m.shownTool == "" {
		m.shownTool = m.toolSubject.Text
	}
	q := *p
	q.ID = appearanceID(m.salt, p.Content, m.current)
	if n := len(m.recent); n == 0 || m.recent[n-1].ID != q.ID {
		m.recent = append(m.recent[max(0, n+1-recentPrompts):], &q)
	}
	return &q
}

// withToolSubject is next's prompt with the subject of the tool call the
// agent reported for it, where it reported one since the last prompt left
// and the prompt shows a subject of that kind, or one agentd could not read
// (a dialog of the agent's own shows none; a plan reads better drawn than
// as the tool's input). Where the screen names another thing, that is
// drift, noted once a prompt for the session to log. The prompt's Content
// stays the screen's: it is what the guard sees again before it types.
func (m *machine) withToolSubject(next State) *detect.Prompt {
	p, rep := next.Prompt, m.toolSubject
	if next.Name != Blocked || p == nil || p.Subject == nil || rep == nil || m.toolSeq <= m.goneSeq ||
		p.Subject.Kind != rep.Kind && p.Subject.Text != "" {
		return p
	}
	agree := sameSubject(rep, p.Subject)
	if !agree && p.Subject.Text != "" && m.driftFor != p.Content {
		m.drift = fmt.Sprintf("reported %s %q, on screen %s %q", rep.Kind, rep.Text, p.Subject.Kind, p.Subject.Text)
		m.driftFor = p.Content
	}
	sub := *rep
	if sub.Detail == "" && agree {
		sub.Detail = p.Subject.Detail
	}
	q := *p
	q.Subject = &sub
	return &q
}

// sameSubject says whether a reported subject and the one on screen name
// the same thing: the same text (white space aside), the screen's a path
// the report names whole, or cut short ("…") of it. An unread one on
// screen disagrees with nothing.
func sameSubject(rep, screen *detect.Subject) bool {
	r, s := strings.Join(strings.Fields(rep.Text), " "), strings.Join(strings.Fields(screen.Text), " ")
	if s == "" || r == s || strings.HasSuffix(r, "/"+s) {
		return true
	}
	cut, ok := strings.CutSuffix(s, "…")
	return ok && strings.HasPrefix(r, cut)
}

// recentPrompts is how many past appearances a session recalls, to name
// what a stale answer was meant for.
const recentPrompts = 8

// recall is the recent appearance promptID names, or nil.
func (m *machine) recall(promptID string) *detect.Prompt {
	for i := len(m.recent) - 1; i >= 0; i-- {
		if m.recent[i].ID == promptID {
			return m.recent[i]
		}
	}
	return nil
}

// takeDrift returns the drift noted since it was last taken.
func (m *machine) takeDrift() string {
	d := m.drift
	m.drift = ""
	return d
}

// appearanceID is the promptId of the n-th appearance of a prompt whose
// Content is content, in a session salted salt.
func appearanceID(salt, content string, n uint64) string {
	var h [32]byte
	if salt == "" {
		h = sha256.Sum256(fmt.Appendf(nil, "%s#%d", content, n))
	} else {
		h = sha256.Sum256(fmt.Appendf(nil, "%s\x00%s#%d", salt, content, n))
	}
	return hex.EncodeToString(h[:8])
}

// newSalt is a session's promptId salt.
func newSalt() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// stepScreen decides a terminal session's state on its screen.
func (m *machine) stepScreen(f facts) (State, time.Duration) {
	v := f.screen
	rep := m.freshReport(v, f.status, f.statusSeq, f.now)
	if !v.Unmatched() || rep != nil {
		m.ready = true
	}
	if wait := m.holdGeneric(v, f.now); wait > 0 && rep == nil {
		return m.state, wait
	}
	starting := !m.ready && f.rules.HasIdleRule()
	lineMode, again := false, minAgain(m.noteScreenDrift(v, rep, f.now), m.noteBusyDrift(v, rep, f))
	if !m.inputRaw && f.rules.Input.Raw && v.State == detect.StateIdle {
		// A ready composer drawn while the terminal still echoes and
		// buffers lines: the agent has not switched its input on yet, and
		// what is typed now is lost (Grok CLI draws its composer first).
		// Look again shortly: entering raw mode writes nothing. Some take
		// their keys only a moment later still (input.ready_after).
		switch {
		case f.canonical:
			lineMode, m.rawAt, again = true, time.Time{}, minAgain(again, readyRecheck)
		case m.rawAt.IsZero():
			m.rawAt = f.now
			fallthrough
		default:
			if wait := f.rules.Input.ReadyDelay() - f.now.Sub(m.rawAt); wait > 0 {
				lineMode, again = true, minAgain(again, wait)
			} else {
				m.inputRaw = true
			}
		}
	}
	return decide(evidence{screen: v, report: rep, current: m.state, seen: m.seen, task: m.task, starting: starting,
		lineMode: lineMode, knowsIdle: f.rules.HasIdleRule(), fg: f.fg}), again
}

// driftAfter is how long a report and the screen may disagree before the
// screen is kept as drift: long enough for an agent that reports a prompt
// before it draws it to draw it.
const driftAfter = 5 * time.Second

// noteScreenDrift watches for the screen and the agent's own report (a
// hook, a signal, OSC 7501, its log) disagreeing: the agent says it works
// or waits on a person while its screen reads idle, matched by no rule
// but a composer. Held for driftAfter, that is a screen the rules do not
// know (a new release, a dialog nobody recorded): it is noted once per
// report, for the session to keep. It returns how soon to look again
// while a disagreement waits out driftAfter.
func (m *machine) noteScreenDrift(v detect.Verdict, rep *report, now time.Time) time.Duration {
	if rep == nil || rep.rec == nil || rep.rec.State != "blocked" && rep.rec.State != "working" || v.State != detect.StateIdle {
		m.disagreeSince = time.Time{}
		return 0
	}
	if m.disagreeSince.IsZero() || m.disagreeSeq != rep.seq {
		m.disagreeSince, m.disagreeSeq = now, rep.seq
	}
	if wait := driftAfter - now.Sub(m.disagreeSince); wait > 0 {
		return wait
	}
	if m.keptSeq != rep.seq {
		m.keptSeq = rep.seq
		m.screenDrift = fmt.Sprintf("%s says %s; the screen has read %s (%s) for %s", rep.reason, rep.rec.State, v.State, v.Reason, driftAfter)
	}
	return 0
}

// busyShare is the share of one core that an agent's processes use,
// averaged over driftAfter, when they work: a Node agent waiting at its
// composer uses about 1 %, one that streams or runs a tool far more.
const busyShare = 0.2

// busyLook is how often a still screen that no rule knows looks at the
// agent's CPU time again.
const busyLook = time.Second

// noteBusyDrift watches the other disagreement: an agent's processes busy
// (busyShare of a core over driftAfter) while its screen reads idle —
// matched by no rule, or by a composer with a reply streaming and no
// spinner — and nothing the agent reports says otherwise. That is a
// working screen the rules do not know; it is noted once per stretch.
// Only an agent's own rules count: under the generic or shell rules a
// busy program is no news. The CPU is read only while this watches: on a
// clock (busyLook) where no rule knows the screen, and where a composer
// matched only as the screen draws, so an idle session waiting at its
// composer costs nothing.
func (m *machine) noteBusyDrift(v detect.Verdict, rep *report, f facts) time.Duration {
	ownRules := f.rules != nil && f.rules.Name != detect.Generic && !f.rules.Identify.Shell
	if !ownRules || !m.ready || rep != nil || v.State != detect.StateIdle {
		m.watchCPU, m.busyFrom, m.busyKept = false, time.Time{}, false
		return 0
	}
	m.watchCPU = true
	var again time.Duration
	if v.Unmatched() && !m.busyKept {
		again = busyLook
	}
	if !f.cpuRead {
		return again
	}
	at := f.now
	if !f.cpuAt.IsZero() {
		at = f.cpuAt
	}
	if m.busyFrom.IsZero() || f.cpu < m.busyCPU {
		m.busyFrom, m.busyCPU = at, f.cpu
		return again
	}
	span := at.Sub(m.busyFrom)
	if span < driftAfter {
		return again
	}
	share := float64(f.cpu-m.busyCPU) / float64(span)
	if share < busyShare {
		m.busyFrom, m.busyCPU = at, f.cpu // a new window from here
		return again
	}
	if !m.busyKept {
		m.busyKept = true
		m.screenDrift = fmt.Sprintf("the agent's processes used %.0f%% of a core for %s; the screen has read %s (%s)",
			100*share, span.Round(100*time.Millisecond), v.State, v.Reason)
	}
	return 0
}

// takeScreenDrift returns why the screen is to be kept, once.
func (m *machine) takeScreenDrift() string {
	d := m.screenDrift
	m.screenDrift = ""
	return d
}

// minAgain is the sooner of two looks asked for (0: none).
func minAgain(a, b time.Duration) time.Duration {
	if a == 0 || b > 0 && b < a {
		return b
	}
	return a
}

// holdGeneric returns how much longer the verdict v must stay on screen
// before it counts (genericHold), or 0: a verdict of the agent's own rules,
// or the generic reader's once it has held.
func (m *machine) holdGeneric(v detect.Verdict, now time.Time) time.Duration {
	if !detect.GenericReader(v.Reason) || v.State != detect.StateBlocked && v.State != detect.StateError {
		m.genericSeen = ""
		return 0
	}
	seen := v.Reason + "\x00" + v.Message
	if v.Prompt != nil {
		seen += "\x00" + v.Prompt.Content
	}
	if seen != m.genericSeen {
		m.genericSeen, m.genericAt = seen, now
	}
	return max(0, genericHold-now.Sub(m.genericAt))
}

// freshReport returns the newest report the agent made, unless it is a
// blocked report whose prompt has come and gone: agents report blocked
// before they draw the prompt and may report the next state only after it
// is answered, so once the screen has shown the prompt and no longer does
// (or agentd answered it), the report says nothing more. An OSC 7501 record
// the terminal received since the last look becomes the newest report.
func (m *machine) freshReport(v detect.Verdict, status *detect.StatusRecord, statusSeq uint64, now time.Time) *report {
	if statusSeq != m.oscSeq {
		m.oscSeq = statusSeq
		m.reportSeq++
		m.report = &report{source: SourceOSC, reason: "osc7501", rec: status, seq: m.reportSeq, received: now}
	}
	r := m.report
	if v.State != m.screenState {
		// The screen's own verdict moved while report r was the newest.
		m.screenState, m.screenMovedAt = v.State, m.reportSeq
	}
	if r == nil || r.rec == nil {
		return r
	}
	if turnEnd(r.rec) {
		// A Stop hook ends the foreground turn, not the work the agent
		// started in the background: while the screen shows that work
		// running the screen holds, and once it showed it, the report is
		// spent (the screen's completion line or a later report ends it).
		if v.Background {
			m.outlivedSeq = r.seq
		}
		if m.outlivedSeq == r.seq {
			return nil
		}
	}
	if (r.rec.State == "working" || r.background) && (v.State == detect.StateDone || v.State == detect.StateError) && m.screenMovedAt == r.seq {
		// The screen shows the turn's end, drawn after the agent said it
		// was working and with nothing said since: the report is stale (a
		// hook that never fired, a record never cleared).
		return nil
	}
	if r.rec.State != "blocked" {
		return r
	}
	if v.State == detect.StateBlocked {
		m.promptShownSeq = r.seq
		return r
	}
	if m.promptShownSeq == r.seq || m.answeredSeq == r.seq {
		return nil
	}
	return r
}

// set records next and reports whether a notification is due.
func (m *machine) set(next State, now time.Time) (State, bool) {
	if next.key() == m.state.key() && next.Reason == m.state.Reason {
		return m.state, false
	}
	if next.key() == m.state.key() {
		// Same state for another reason: keep its start time, tell no one.
		next.Since = m.state.Since
		m.state = next
		return m.state, false
	}
	next.Since = now
	m.state = next
	m.revision++
	return m.state, true
}

// The events below are what happens to a session between two steps. Each
// is an input to step (facts.event), which takes it in take; most change
// only the memory the next step reads, and failed and exited decide the
// state themselves.

// event is one of them: kind names it, and the fields it uses say what.
type event struct {
	kind     eventKind
	report   report         // reported
	promptID string         // answering
	state    State          // failed (its agent), exited, held
	agent    string         // named, failed
	prompt   *detect.Prompt // resumed: the prompt read on the repainted screen
	at       time.Time      // resumed: when the session started
}

type eventKind int

const (
	evReported eventKind = iota + 1
	evRulesChanged
	evTyped
	evSawEnd
	evTasked
	evAnswering
	evAnswerFailed
	evPermissionTimedOut
	evFailed
	evExited
	evNamed
	evHeld
	evResumed
)

// on steps the machine on one event at now.
func (m *machine) on(e event, now time.Time) (State, bool) {
	st, changed, _ := m.step(facts{now: now, event: &e})
	return st, changed
}

// take takes event e, at now, into the memory; only step calls it. It
// returns the state, and whether it is a change to publish.
func (m *machine) take(e event, now time.Time) (State, bool) {
	switch e.kind {
	case evReported:
		m.takeReport(e.report, now)
	case evRulesChanged:
		m.ready, m.inputRaw = false, false
	case evTyped:
		if m.state.Name == Blocked && m.state.Prompt != nil {
			m.typedAt = m.state.Prompt.ID
		}
		m.stretch = nil // the keys may have answered it
		m.takeSawEnd()
		if m.state.Name != Blocked {
			m.task = true
		}
	case evSawEnd:
		m.takeSawEnd()
	case evTasked:
		m.task = true
	case evAnswering:
		m.answered = e.promptID
		m.stretch = nil
		if m.report != nil {
			m.answeredSeq = m.report.seq
		}
	case evAnswerFailed:
		m.answered = ""
	case evPermissionTimedOut:
		m.timedOut = true
	case evFailed:
		return m.set(State{Agent: e.agent, Name: Error, Source: SourceProcess, Reason: "agentd.internal_error"}, now)
	case evExited:
		st := e.state
		st.Since = now
		m.state, m.ended = st, true
		m.revision++
		return m.state, true
	case evNamed:
		m.state.Agent = e.agent
	case evHeld:
		st := e.state
		st.Since = now
		m.state = st
	case evResumed:
		if m.inputRaw {
			m.rawAt = e.at
		}
		if p := e.prompt; p != nil && m.state.Prompt != nil && m.shown == p.Content {
			q := *p
			q.ID = m.state.Prompt.ID // the appearance goes on
			m.state.Prompt = &q
		}
	}
	return m.state, false
}

// reported takes a report the agent made of itself (a hook, a signal, a
// line of its log), received at now, as the newest.
func (m *machine) reported(r report, now time.Time) { m.on(event{kind: evReported, report: r}, now) }

// takeReport is reported's part of take. A "clear" record withdraws the
// last. A report that says when it happened, and happened before the
// newest report came in, is older news: a log read late (a turn's end,
// read after the next turn's start was reported) must not undo what came
// after it. Only a turn's end that refines the end already reported
// (Codex's log says interrupted where its signal said idle) is still
// taken.
func (m *machine) takeReport(r report, now time.Time) {
	if m.report != nil && !r.at.IsZero() && r.at.Before(m.report.received) && !(turnEnd(r.rec) && turnEnd(m.report.rec)) {
		return
	}
	r.received = now
	m.reportSeq++
	r.seq = m.reportSeq
	switch {
	case r.subject != nil:
		m.toolSubject, m.toolSeq = r.subject, r.seq
	case r.rec != nil && r.rec.State != "blocked":
		// The tool call ran, or the turn moved on: its subject is spent.
		m.toolSubject = nil
	}
	if r.rec != nil && r.rec.State == "clear" {
		r.rec = nil
	}
	m.report = &r
}

// turnEnd says whether rec reports a turn that ended.
func turnEnd(rec *detect.StatusRecord) bool {
	return rec != nil && (rec.State == "done" || rec.State == "idle")
}

// rulesChanged: a shell session switched to another agent's rules (or back
// to its own). A newly started agent draws its first screen.
func (m *machine) rulesChanged() { m.on(event{kind: evRulesChanged}, time.Time{}) }

// typed: a person typed keys into the terminal. At a prompt they may have
// moved its selection; elsewhere keys are a task. Either way the end of
// the last turn has been seen.
func (m *machine) typed() { m.on(event{kind: evTyped}, time.Time{}) }

// sawEnd: the person looked at the session; a finished turn is seen.
func (m *machine) sawEnd() { m.on(event{kind: evSawEnd}, time.Time{}) }

func (m *machine) takeSawEnd() {
	if m.state.Name == Done {
		m.seen = true
	}
}

// tasked: agentd sent the agent work (session/send, an ACP prompt).
func (m *machine) tasked() { m.on(event{kind: evTasked}, time.Time{}) }

// answering: agentd is about to type the answer to promptID. Until that
// prompt leaves, another answer to it is refused, and a blocked report
// made before it says nothing more.
func (m *machine) answering(promptID string) {
	m.on(event{kind: evAnswering, promptID: promptID}, time.Time{})
}

// answerFailed: the keys did not take (the same prompt is still there), so
// a retry may go through.
func (m *machine) answerFailed() { m.on(event{kind: evAnswerFailed}, time.Time{}) }

// permissionTimedOut: an ACP permission was answered with the agent's
// reject option because nobody did in time.
func (m *machine) permissionTimedOut() { m.on(event{kind: evPermissionTimedOut}, time.Time{}) }

// failed: agentd itself failed inside the session's work; the session is
// error and no longer classified.
func (m *machine) failed(agent string, now time.Time) (State, bool) {
	return m.on(event{kind: evFailed, agent: agent}, now)
}

// exited: the process ended. Its state is final: later steps keep it.
func (m *machine) exited(st State, now time.Time) State {
	st, _ = m.on(event{kind: evExited, state: st}, now)
	return st
}

// named: the session's agent has a name now (an ACP agent named itself in
// initialize); the state carries it.
func (m *machine) named(agent string) { m.on(event{kind: evNamed, agent: agent}, time.Time{}) }

// held: the session waits on something other than its agent (an ACP
// agent's terminal login) and its state is st, since now, until a look
// finds the agent.
func (m *machine) held(st State, now time.Time) State {
	st, _ = m.on(event{kind: evHeld, state: st}, now)
	return st
}

// resumed: a handover brought the session to this process. The terminal's
// mode is taken to have left line mode when the session started (the old
// code saw it raw), and the prompt read again on the repainted screen, p,
// where it is the appearance that was on screen, goes on under its
// promptId with its keys (keys are the rules', never the snapshot's).
func (m *machine) resumed(started time.Time, p *detect.Prompt) {
	m.on(event{kind: evResumed, at: started, prompt: p}, time.Time{})
}

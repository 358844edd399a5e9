package sessions

import (
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// Manifests for the machine's tests: one whose rules know the agent's
// ready screen, one that does not, and a raw-input agent that takes its
// keys a second after its terminal leaves line mode.
var (
	knowsIdleRules = &detect.Manifest{Name: "x", Rules: []detect.Rule{{ID: "composer", State: detect.StateIdle}}}
	noIdleRules    = &detect.Manifest{Name: "x"}
	rawRules       = mustManifest(`name = "x"
[input]
raw = true
ready_after = "1s"
[[rule]]
id = "composer"
state = "idle"
match = ['^> ']
`)
)

func mustManifest(src string) *detect.Manifest {
	m, err := detect.ParseManifest("test.toml", []byte(src))
	if err != nil {
		panic(err)
	}
	return m
}

// stepOn steps a machine whose memory is e's on e's screen.
func stepOn(t *testing.T, e evidence) State {
	t.Helper()
	rules := noIdleRules
	switch {
	case e.lineMode:
		rules = rawRules
	case e.knowsIdle || e.starting:
		rules = knowsIdleRules
	}
	m := machine{state: e.current, seen: e.seen, task: e.task, ready: !e.starting}
	if e.report != nil {
		m.reported(*e.report, time.Time{})
	}
	st, _, _ := m.step(facts{rules: rules, agent: "x", screen: e.screen, canonical: e.lineMode, fg: e.fg})
	return st
}

var (
	idleV    = detect.Verdict{Agent: "x", State: detect.StateIdle, Reason: "x.no_rule"}
	readyV   = detect.Verdict{Agent: "x", State: detect.StateIdle, Reason: "x.composer"}
	workingV = detect.Verdict{Agent: "x", State: detect.StateWorking, Reason: "x.spinner"}
	doneV    = detect.Verdict{Agent: "x", State: detect.StateDone, Outcome: "completed", Reason: "x.turn_done"}
	promptP1 = &detect.Prompt{ID: "p1", Content: "p1", Options: []detect.Option{{ID: "1", Label: "Yes", Keys: "1"}}}
	// shownP1 is promptP1's promptId in a session: its first appearance.
	shownP1  = appearanceID("", "p1", 1)
	blockedV = detect.Verdict{Agent: "x", State: detect.StateBlocked, Reason: "x.menu", Prompt: promptP1}
)

// stepper steps one machine through a run of screens, as a live session
// would, on a clock the test moves.
type stepper struct {
	t     *testing.T
	m     machine
	rules *detect.Manifest
	now   time.Time
}

func newStepper(t *testing.T, rules *detect.Manifest) *stepper {
	now := time.Unix(1000, 0)
	return &stepper{t: t, m: newMachine(startingState("x", now)), rules: rules, now: now}
}

func (s *stepper) on(v detect.Verdict) State {
	st, _, _ := s.m.step(facts{rules: s.rules, agent: "x", now: s.now, screen: v})
	return st
}

func (s *stepper) want(v detect.Verdict, name string) State {
	s.t.Helper()
	st := s.on(v)
	if st.Name != name {
		s.t.Fatalf("on %s: %s (%s), want %s", v.Reason, st.Name, st.Reason, name)
	}
	return st
}

// seen: a finished turn stays done until the person saw it, and a new
// turn forgets that it was seen.
func TestMachineSeen(t *testing.T) {
	s := newStepper(t, knowsIdleRules)
	s.want(readyV, Idle)
	s.m.tasked()
	s.want(workingV, Working)
	s.want(doneV, Done)
	s.want(readyV, Done) // not seen: still done
	s.m.sawEnd()
	s.want(readyV, Idle)
	s.want(workingV, Working)
	if s.m.seen {
		t.Fatal("a new turn kept the last one's seen")
	}
}

// task: a turn that ends with no completion line is done only when the
// person gave the agent work; the next turn needs a task of its own.
func TestMachineTask(t *testing.T) {
	s := newStepper(t, knowsIdleRules)
	s.want(workingV, Working)
	s.want(readyV, Idle) // busy at start-up, no task: no turn ended
	s.m.tasked()
	s.want(workingV, Working)
	if st := s.want(readyV, Done); st.Outcome != "unknown" {
		t.Fatalf("outcome %q, want unknown", st.Outcome)
	}
	s.m.sawEnd()
	s.want(readyV, Idle)
	if s.m.task {
		t.Fatal("idle kept the finished turn's task")
	}
	s.want(workingV, Working)
	s.want(readyV, Idle)
}

// typed: keys at a prompt name it (an answer by arrows is then refused);
// keys anywhere else are a task.
func TestMachineTyped(t *testing.T) {
	s := newStepper(t, knowsIdleRules)
	s.want(blockedV, Blocked)
	s.m.typed()
	if s.m.typedAt != shownP1 || s.m.task {
		t.Fatalf("typed at a prompt: typedAt %q task %v, want p1 and no task", s.m.typedAt, s.m.task)
	}
	s.want(readyV, Idle)
	s.m.typed()
	if !s.m.task {
		t.Fatal("keys typed at the composer are not a task")
	}
}

// answered: an answer in flight is remembered until its prompt leaves the
// screen, and a blocked report made before it says nothing more.
func TestMachineAnswered(t *testing.T) {
	s := newStepper(t, knowsIdleRules)
	s.m.reported(report{source: SourceHook, reason: "hook.PermissionRequest", rec: &detect.StatusRecord{State: "blocked", Kind: "permission", Message: "approve"}}, s.now)
	s.want(blockedV, Blocked)
	s.m.answering(shownP1)
	s.want(blockedV, Blocked)
	if s.m.answered != shownP1 {
		t.Fatal("the answer was forgotten while its prompt is still on screen")
	}
	// The prompt has gone; the blocked report was answered and must not
	// hold the session blocked.
	s.want(workingV, Working)
	if s.m.answered != "" {
		t.Fatalf("answered %q after the prompt left", s.m.answered)
	}
	s.m.answerFailed()
}

// Report freshness: a blocked report whose prompt came and went is stale,
// and so is a working report drawn over by the turn's end.
func TestMachineReportFreshness(t *testing.T) {
	s := newStepper(t, noIdleRules)
	s.m.reported(report{source: SourceHook, reason: "hook.PermissionRequest", rec: &detect.StatusRecord{State: "blocked", Message: "approve"}}, s.now)
	if st := s.on(workingV); st.Name != Blocked || st.Source != SourceHook {
		t.Fatalf("a blocked report before its prompt shows: %s/%s, want blocked from the hook", st.Name, st.Source)
	}
	s.want(blockedV, Blocked)
	if st := s.on(workingV); st.Source != SourceScreen {
		t.Fatalf("after the prompt left the report still decides: %+v", st)
	}
	s.m.reported(report{source: SourceHook, reason: "hook.UserPromptSubmit", rec: &detect.StatusRecord{State: "working"}}, s.now)
	s.want(idleV, Working) // the report beats a screen no rule reads
	if st := s.on(doneV); st.Name != Done || st.Source != SourceScreen {
		t.Fatalf("the turn's end drawn after a working report: %s/%s, want done from the screen", st.Name, st.Source)
	}
	s.m.reported(report{source: SourceHook, reason: "signal.clear", rec: &detect.StatusRecord{State: "clear"}}, s.now)
	if s.m.report.rec != nil {
		t.Fatal("a clear record did not withdraw the report")
	}
}

// An OSC 7501 record the terminal counted becomes the newest report once.
func TestMachineOSCRecord(t *testing.T) {
	s := newStepper(t, noIdleRules)
	st, _, _ := s.m.step(facts{rules: s.rules, agent: "x", now: s.now, screen: idleV, status: &detect.StatusRecord{State: "working"}, statusSeq: 1})
	if st.Name != Working || st.Reason != "osc7501.working" {
		t.Fatalf("%+v, want working from osc7501", st)
	}
	seq := s.m.reportSeq
	s.m.step(facts{rules: s.rules, agent: "x", now: s.now, screen: idleV, status: &detect.StatusRecord{State: "working"}, statusSeq: 1})
	if s.m.reportSeq != seq {
		t.Fatal("the same record was taken in twice")
	}
}

// ready: until a rule matched, a screen no rule reads is a start-up
// screen, not idle; a shell switching to another agent starts over.
func TestMachineReady(t *testing.T) {
	s := newStepper(t, knowsIdleRules)
	s.want(idleV, Working)
	s.want(readyV, Idle)
	s.want(idleV, Idle)
	s.m.rulesChanged()
	if s.m.ready {
		t.Fatal("new rules kept the old agent's readiness")
	}
}

// Line mode: a raw agent's composer does not count while its terminal is
// canonical, nor for input.ready_after once it left; the machine asks to
// look again then.
func TestMachineLineMode(t *testing.T) {
	s := newStepper(t, rawRules)
	st, _, again := s.m.step(facts{rules: s.rules, agent: "x", now: s.now, screen: readyV, canonical: true})
	if st.Name != Working || again != readyRecheck {
		t.Fatalf("canonical terminal: %s, again %v; want working, look again in %v", st.Name, again, readyRecheck)
	}
	st, _, again = s.m.step(facts{rules: s.rules, agent: "x", now: s.now, screen: readyV})
	if st.Name != Working || again != time.Second {
		t.Fatalf("just left line mode: %s, again %v; want working, look again in 1s", st.Name, again)
	}
	s.now = s.now.Add(time.Second)
	st, _, again = s.m.step(facts{rules: s.rules, agent: "x", now: s.now, screen: readyV})
	if st.Name != Idle || again != 0 || !s.m.inputRaw {
		t.Fatalf("1 s after: %s, again %v, raw %v; want idle and no second look", st.Name, again, s.m.inputRaw)
	}
}

// The process table: a shell in the foreground is idle, a job working.
func TestMachineForeground(t *testing.T) {
	s := newStepper(t, noIdleRules)
	st, _, _ := s.m.step(facts{rules: s.rules, agent: "x", now: s.now, screen: idleV, fg: foreground{job: true}})
	if st.Name != Working || st.Source != SourceProcess {
		t.Fatalf("a foreground job: %+v", st)
	}
	st, _, _ = s.m.step(facts{rules: s.rules, agent: "x", now: s.now, screen: doneV, fg: foreground{shell: true}})
	if st.Name != Idle || st.Reason != "process.shell_foreground" {
		t.Fatalf("the shell in the foreground: %+v", st)
	}
}

// An ACP session steps the same machine: pending permission, turn,
// timeout, login, end.
func TestMachineACP(t *testing.T) {
	s := newStepper(t, noIdleRules)
	acpStep := func(a acpFacts) State {
		st, _, _ := s.m.step(facts{rules: s.rules, agent: "x", now: s.now, acp: &a})
		return st
	}
	if st := acpStep(acpFacts{}); st.Name != Idle {
		t.Fatalf("no turn: %+v", st)
	}
	if st := acpStep(acpFacts{turn: true, pending: promptP1}); st.Name != Blocked || st.Prompt.ID != "p1" {
		t.Fatalf("a pending permission: %+v", st)
	}
	s.m.permissionTimedOut()
	if st := acpStep(acpFacts{turn: true}); st.Reason != "acp.permission_timeout" {
		t.Fatalf("after a timed-out permission: %+v", st)
	}
	if st := acpStep(acpFacts{turn: true, pending: promptP1}); st.Name != Blocked || s.m.timedOut {
		t.Fatalf("the next permission keeps the timeout: %+v, timedOut %v", st, s.m.timedOut)
	}
	if st := acpStep(acpFacts{ended: true, outcome: "completed"}); st.Name != Done || st.Outcome != "completed" {
		t.Fatalf("a turn that ended: %+v", st)
	}
	s.m.sawEnd()
	if st := acpStep(acpFacts{ended: true, outcome: "completed"}); st.Name != Idle {
		t.Fatalf("a seen end: %+v", st)
	}
	if st := acpStep(acpFacts{authNeeded: "log in"}); st.Name != Error || st.Message != "log in" {
		t.Fatalf("a login needed: %+v", st)
	}
}

// set: a new reason for the same state keeps its start and tells no one;
// a new state is a revision. failed and exited end the decision.
func TestMachineSetFailedExited(t *testing.T) {
	s := newStepper(t, knowsIdleRules)
	st := s.want(workingV, Working)
	rev := s.m.revision
	s.now = s.now.Add(time.Second)
	again, changed, _ := s.m.step(facts{rules: s.rules, agent: "x", now: s.now, screen: detect.Verdict{State: detect.StateWorking, Reason: "x.other"}})
	if changed || !again.Since.Equal(st.Since) || s.m.revision != rev {
		t.Fatalf("same state, another reason: changed %v since %v (was %v) revision %d (was %d)", changed, again.Since, st.Since, s.m.revision, rev)
	}
	if st, changed := s.m.failed("x", s.now); !changed || st.Reason != "agentd.internal_error" {
		t.Fatalf("failed: %+v changed %v", st, changed)
	}
	ex := s.m.exited(State{Agent: "x", Name: Exited, Source: SourceProcess, Reason: "process.exit"}, s.now)
	if st, changed, _ := s.m.step(facts{rules: s.rules, agent: "x", now: s.now, screen: readyV}); changed || st != ex {
		t.Fatalf("a step after the exit changed the state: %+v", st)
	}
}

// decide()'s table, stepped through the machine: each case's evidence
// becomes the machine's memory (stepOn) and the screen its facts.
func TestMachineDecides(t *testing.T) {
	working := detect.Verdict{Agent: "x", State: detect.StateWorking, Reason: "x.spinner"}
	idle := detect.Verdict{Agent: "x", State: detect.StateIdle, Reason: "x.no_rule"}
	done := detect.Verdict{Agent: "x", State: detect.StateDone, Outcome: "completed", Reason: "x.turn_done"}
	blocked := detect.Verdict{Agent: "x", State: detect.StateBlocked, Reason: "x.menu", Prompt: &detect.Prompt{ID: "p1", Options: []detect.Option{{ID: "1", Label: "Yes"}}}}
	rec := func(state string) *report {
		return &report{source: SourceOSC, rec: &detect.StatusRecord{State: state, App: "x", Kind: "permission", Message: "approve Bash"}}
	}
	cur := func(name string) State { return State{Name: name} }
	tests := []struct {
		name        string
		e           evidence
		want        string
		wantSource  string
		wantOutcome string
	}{
		{"screen blocker beats a report", evidence{screen: blocked, report: rec("working"), current: cur(Working)}, Blocked, SourceScreen, ""},
		{"report beats other screen rules", evidence{screen: idle, report: rec("working"), current: cur(Idle)}, Working, SourceOSC, ""},
		{"blocked report without a readable prompt", evidence{screen: working, report: rec("blocked"), current: cur(Working)}, Blocked, SourceOSC, ""},
		{"an auth report without a prompt on screen is a login to fix", evidence{screen: working, report: &report{source: SourceOSC, rec: &detect.StatusRecord{State: "blocked", Kind: "auth", Message: "Not logged in · Please run /login"}}, current: cur(Working)}, Error, SourceOSC, ""},
		{"an auth prompt on screen is blocked", evidence{screen: blocked, report: &report{source: SourceOSC, rec: &detect.StatusRecord{State: "blocked", Kind: "auth"}}, current: cur(Working)}, Blocked, SourceScreen, ""},
		{"unknown report state is ignored", evidence{screen: working, report: &report{source: SourceOSC, rec: &detect.StatusRecord{State: "dancing"}}, current: cur(Idle)}, Working, SourceScreen, ""},
		{"completion line is done", evidence{screen: done, current: cur(Working)}, Done, SourceScreen, "completed"},
		{"seen done is idle", evidence{screen: done, current: cur(Done), seen: true}, Idle, SourceScreen, ""},
		{"a turn that ended without a completion line", evidence{screen: idle, current: cur(Working), task: true}, Done, SourceScreen, "unknown"},
		{"a prompt answered before any task (folder trust) leaves the agent idle", evidence{screen: detect.Verdict{State: detect.StateIdle, Reason: "x.composer"}, current: State{Name: Blocked, Source: SourceScreen, Prompt: &detect.Prompt{Kind: "trust"}}, knowsIdle: true}, Idle, SourceScreen, ""},
		{"a prompt answered in a task, back at the composer, ends the turn", evidence{screen: detect.Verdict{State: detect.StateIdle, Reason: "x.composer"}, current: State{Name: Blocked, Source: SourceScreen}, task: true, knowsIdle: true}, Done, SourceScreen, "unknown"},
		{"start-up settling is not a turn", evidence{screen: idle, current: cur(Working)}, Idle, SourceScreen, ""},
		{"a half-drawn start-up screen is not idle", evidence{screen: idle, current: State{Name: Working, Source: SourceProcess}, starting: true}, Working, SourceProcess, ""},
		{"a composer the agent does not read yet (line mode) is not idle", evidence{screen: detect.Verdict{State: detect.StateIdle, Reason: "x.composer"}, current: State{Name: Working, Source: SourceProcess}, knowsIdle: true, lineMode: true}, Working, SourceProcess, ""},
		{"a recognised ready screen ends start-up", evidence{screen: detect.Verdict{State: detect.StateIdle, Reason: "x.composer"}, current: cur(Working), starting: true}, Idle, SourceScreen, ""},
		{"an idle report keeps an unseen done", evidence{screen: idle, report: rec("idle"), current: State{Name: Done, Outcome: "completed"}, task: true}, Done, "", "completed"},
		{"an idle report keeps the screen's turn end", evidence{screen: detect.Verdict{State: detect.StateDone, Outcome: "interrupted", Reason: "x.interrupted"}, report: rec("idle"), current: cur(Working), task: true}, Done, SourceScreen, "interrupted"},
		{"a screen no rule reads mid-turn, where the rules know the ready screen, keeps working", evidence{screen: idle, current: State{Name: Working, Source: SourceScreen}, task: true, knowsIdle: true}, Working, SourceScreen, ""},
		{"a screen no rule reads right after a prompt, where the rules know the ready screen, is the turn going on", evidence{screen: idle, current: State{Name: Blocked, Source: SourceScreen}, task: true, knowsIdle: true}, Working, SourceScreen, ""},
		{"the ready screen after a turn is its end", evidence{screen: detect.Verdict{State: detect.StateIdle, Reason: "x.composer"}, current: cur(Working), task: true, knowsIdle: true}, Done, SourceScreen, "unknown"},
		{"an error on screen stands over a Stop report", evidence{screen: detect.Verdict{State: detect.StateError, Reason: "x.api_error", Message: "API Error: 400"}, report: rec("done"), current: cur(Working), task: true}, Error, SourceScreen, ""},
		{"done report takes the screen's outcome", evidence{screen: detect.Verdict{State: detect.StateDone, Outcome: "interrupted"}, report: rec("done"), current: cur(Working)}, Done, SourceOSC, "interrupted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := stepOn(t, tc.e)
			if got.Name != tc.want || (tc.wantSource != "" && got.Source != tc.wantSource) || got.Outcome != tc.wantOutcome {
				t.Fatalf("step = %s/%s/%s (%s), want %s/%s/%s", got.Name, got.Source, got.Outcome, got.Reason, tc.want, tc.wantSource, tc.wantOutcome)
			}
			if got.Name == Blocked && (got.Prompt == nil || got.Prompt.ID == "") {
				t.Fatalf("blocked without a prompt id: %+v", got.Prompt)
			}
		})
	}
}

// A report that says when it happened (a log line) and happened before the
// newest report came in is older news: Codex's log, read late under load,
// gave the first turn's task_complete after the second turn's start had
// been reported, and the session read done in the middle of a turn.
func TestMachineLateLogEventIsOlderNews(t *testing.T) {
	s := newStepper(t, noIdleRules)
	turnEnd := s.now
	s.now = s.now.Add(time.Second)
	s.m.reported(report{source: SourceHook, reason: "signal.working", rec: &detect.StatusRecord{State: "working"}}, s.now)
	s.now = s.now.Add(100 * time.Millisecond)
	s.m.reported(report{source: SourceLog, reason: "log.task_complete", at: turnEnd, rec: &detect.StatusRecord{State: "done"}, outcome: "completed"}, s.now)
	if st := s.on(idleV); st.Name != Working || st.Reason != "signal.working" {
		t.Fatalf("after a late log line of the last turn's end: %s (%s), want working from the signal", st.Name, st.Reason)
	}
	s.m.reported(report{source: SourceLog, reason: "log.task_complete", at: s.now, rec: &detect.StatusRecord{State: "done"}, outcome: "completed"}, s.now.Add(time.Millisecond))
	if st := s.on(idleV); st.Name != Done || st.Reason != "log.task_complete" {
		t.Fatalf("after this turn's end in the log: %s (%s), want done from the log", st.Name, st.Reason)
	}
}

// A late log line of the same turn's end still says how it ended: Codex
// signals idle at Esc, and its log's turn_aborted, read a moment later but
// written before that signal came in, says interrupted.
func TestMachineLateLogRefinesTheTurnsEnd(t *testing.T) {
	s := newStepper(t, noIdleRules)
	s.m.tasked()
	s.m.reported(report{source: SourceHook, reason: "signal.working", rec: &detect.StatusRecord{State: "working"}}, s.now)
	s.want(idleV, Working)
	aborted := s.now.Add(time.Second)
	s.now = aborted.Add(50 * time.Millisecond)
	s.m.reported(report{source: SourceHook, reason: "signal.idle", rec: &detect.StatusRecord{State: "idle"}}, s.now)
	s.m.reported(report{source: SourceLog, reason: "log.turn_aborted", at: aborted, rec: &detect.StatusRecord{State: "done"}, outcome: "interrupted"}, s.now.Add(100*time.Millisecond))
	if st := s.on(idleV); st.Name != Done || st.Outcome != "interrupted" {
		t.Fatalf("after Esc: %s/%s (%s), want done, interrupted", st.Name, st.Outcome, st.Reason)
	}
}

// appearance: a promptId names one appearance of a prompt. A redraw keeps
// it; the prompt leaving and coming back, even reading the same, or
// another prompt in its place, is a new one; and the session recalls
// what a recent promptId showed.
func TestMachinePromptAppearances(t *testing.T) {
	p2 := &detect.Prompt{ID: "p2", Content: "p2", Options: promptP1.Options}
	blocked2 := detect.Verdict{Agent: "x", State: detect.StateBlocked, Reason: "x.menu", Prompt: p2}
	s := newStepper(t, knowsIdleRules)
	first := s.want(blockedV, Blocked).Prompt.ID
	if again := s.want(blockedV, Blocked).Prompt.ID; again != first {
		t.Fatalf("a redraw of the same prompt changed its id: %s, then %s", first, again)
	}
	s.want(workingV, Working)
	second := s.want(blockedV, Blocked).Prompt.ID
	if second == first {
		t.Fatalf("the same prompt shown again after it left kept id %s: an answer to the first would take the second", first)
	}
	third := s.want(blocked2, Blocked).Prompt.ID
	if third == second || third == first {
		t.Fatalf("another prompt in its place shares an id: %s %s %s", first, second, third)
	}
	// Drawn again with no key typed since (a resize reflowed the screen for
	// a frame): nothing could have answered it, so it is the same one.
	if again := s.want(blockedV, Blocked).Prompt.ID; again != second {
		t.Fatalf("the prompt back after a frame of another, no key typed: id %s, want %s", again, second)
	}
	// Keys typed (the terminal answered it), then drawn again: a new one.
	s.m.typed()
	s.want(blocked2, Blocked)
	if fifth := s.want(blockedV, Blocked).Prompt.ID; fifth == second || fifth == first {
		t.Fatalf("the prompt back after keys were typed kept an old id %s", fifth)
	}
	s.m.answering(s.m.state.Prompt.ID)
	s.want(blocked2, Blocked)
	if sixth := s.want(blockedV, Blocked).Prompt.ID; sixth == second || sixth == first {
		t.Fatalf("the prompt back after an answer kept an old id %s", sixth)
	}
	if p := s.m.recall(third); p == nil || p.Content != "p2" {
		t.Fatalf("recall(%s) = %+v, want the second prompt", third, p)
	}
	if promptP1.ID != "p1" {
		t.Fatalf("the verdict's own prompt was changed to %s: verdicts are shared", promptP1.ID)
	}
}

// A hook's tool call is the authority on what a prompt approves: it fills
// the subject of the prompt that follows it, a screen that names another
// thing is drift (noted once), and a report from before the last prompt
// left, or spent by the tool's end, fills nothing.
func TestMachineToolSubjectFromAReport(t *testing.T) {
	onScreen := func(text string) detect.Verdict {
		p := &detect.Prompt{Kind: "permission", Question: "Proceed?", Options: promptP1.Options, Subject: &detect.Subject{Kind: "command", Text: text, Detail: text}}
		p.Seal()
		return detect.Verdict{Agent: "x", State: detect.StateBlocked, Reason: "x.menu", Prompt: p}
	}
	hook := func(s *stepper, event, state string, sub *detect.Subject) {
		s.m.reported(report{source: SourceHook, reason: "hook." + event, rec: &detect.StatusRecord{State: state}, subject: sub}, s.now)
	}
	s := newStepper(t, knowsIdleRules)
	s.want(readyV, Idle)
	hook(s, "PreToolUse", "working", &detect.Subject{Kind: "command", Text: "touch a.txt"})
	st := s.want(onScreen("touch a.txt"), Blocked)
	if sub := st.Prompt.Subject; sub.Text != "touch a.txt" || sub.Detail != "touch a.txt" || s.m.takeDrift() != "" {
		t.Fatalf("an agreeing report: subject %+v, want the report's text with the screen's detail and no drift", sub)
	}
	hook(s, "PostToolUse", "working", nil)
	s.want(workingV, Working)
	hook(s, "PermissionRequest", "blocked", &detect.Subject{Kind: "command", Text: "rm -rf build"})
	st = s.want(onScreen("rm -rf bui"), Blocked)
	if st.Prompt.Subject.Text != "rm -rf build" {
		t.Fatalf("subject %+v, want the report's", st.Prompt.Subject)
	}
	if d := s.m.takeDrift(); !strings.Contains(d, "rm -rf build") || !strings.Contains(d, "rm -rf bui") {
		t.Fatalf("drift %q, want both subjects named", d)
	}
	s.want(onScreen("rm -rf bui"), Blocked)
	if d := s.m.takeDrift(); d != "" {
		t.Fatalf("the same drift noted again: %q", d)
	}
	// The prompt left; the next one comes with no report of its own.
	s.want(workingV, Working)
	if st := s.want(onScreen("make test"), Blocked); st.Prompt.Subject.Text != "make test" {
		t.Fatalf("a report from before the last prompt left named the next one: %+v", st.Prompt.Subject)
	}
	// A dialog of the agent's own shows no subject and gets none.
	s.want(workingV, Working)
	hook(s, "PreToolUse", "working", &detect.Subject{Kind: "command", Text: "ls"})
	if st := s.want(blockedV, Blocked); st.Prompt.Subject != nil {
		t.Fatalf("a prompt without a subject got the report's: %+v", st.Prompt.Subject)
	}
}

// A prompt whose screen reads the same as the last (a command too long to
// show, cut alike) is still a new prompt when the agent reported a new tool
// call for it; a late report of the same call renames nothing.
func TestMachineNewToolCallIsANewPrompt(t *testing.T) {
	cut := &detect.Prompt{Kind: "permission", Question: "Proceed?", Options: promptP1.Options, Subject: &detect.Subject{Kind: "command", Text: "", Truncated: true}}
	cut.Seal()
	onScreen := detect.Verdict{Agent: "x", State: detect.StateBlocked, Reason: "x.menu", Prompt: cut}
	hook := func(s *stepper, text string) {
		s.m.reported(report{source: SourceHook, reason: "hook.PermissionRequest", rec: &detect.StatusRecord{State: "blocked"}, subject: &detect.Subject{Kind: "command", Text: text}}, s.now)
	}
	s := newStepper(t, knowsIdleRules)
	s.want(readyV, Idle)
	hook(s, "make build")
	first := s.want(onScreen, Blocked).Prompt
	if first.Subject.Text != "make build" {
		t.Fatalf("an unread subject was not filled from the report: %+v", first.Subject)
	}
	hook(s, "make build") // the same call again, after the prompt drew
	if again := s.want(onScreen, Blocked).Prompt.ID; again != first.ID {
		t.Fatalf("a late report of the same call renamed the prompt: %s, then %s", first.ID, again)
	}
	hook(s, "make deploy")
	second := s.want(onScreen, Blocked).Prompt
	if second.ID == first.ID || second.Subject.Text != "make deploy" {
		t.Fatalf("a new call under a screen that reads the same kept id %s (%+v)", first.ID, second.Subject)
	}
}

// The same prompt in two sessions has two promptIds (each session's salt),
// so an answer bound to one is never taken by the other; a session made
// again from its snapshot (a handover) keeps its own.
func TestPromptIDsAreTheSessionsOwn(t *testing.T) {
	t0 := time.Unix(1000, 0)
	show := func(salt string) string {
		m := newMachine(State{Agent: "x", Name: Idle, Source: SourceScreen, Since: t0})
		m.salt = salt
		st, _, _ := m.step(facts{rules: knowsIdleRules, agent: "x", screen: blockedV, now: t0})
		if st.Prompt == nil {
			t.Fatalf("no prompt: %+v", st)
		}
		return st.Prompt.ID
	}
	a, b := newSalt(), newSalt()
	if a == b || show(a) == show(b) {
		t.Fatalf("salts %s and %s give promptIds %s and %s; want two of each", a, b, show(a), show(b))
	}
	if show(a) != show(a) {
		t.Fatal("one salt, one prompt: two promptIds")
	}
	if show("") != shownP1 {
		t.Fatal("no salt (a session from an older daemon): not the older promptId")
	}
}

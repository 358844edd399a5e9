// Package sessions hosts agents: one Session per agent, each with a PTY, an
// emulated screen, the terminal's replies, a classifier that runs when the
// screen changes, and guarded writes.
package sessions

import (
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentd/agentd/acp"
	"github.com/agentd/agentd/detect"
)

// Session is one hosted agent. The session core (this file, guard.go's
// Send and Answer, machine.go) decides, guards and publishes; what
// differs between an agent in a terminal and one over ACP is its driver's.
type Session struct {
	ID     string
	Name   string
	Argv   []string
	Cwd    string
	Pid    int
	Origin Origin

	mgr *Manager
	// drv is the session's driver, chosen once (newDriver): the session
	// holds no other handle on it. What only some drivers do (a terminal,
	// prompt turns) is found on it by type assertion (Session.terminal,
	// Session.turns).
	drv      driver
	manifest *detect.Manifest // the rules in use now
	base     *detect.Manifest // the rules of the program spawned

	// A terminal session has five locks, each for a wait the others must
	// not share; an ACP session has the first three.
	//   guardMu  one guarded write (Send, Answer) at a time. It is held
	//            for seconds (an answer waits for its prompt to leave),
	//            so nothing the pump does may take it.
	//   updateMu one decision-and-publish at a time, so states go out in
	//            order. It is held over the driver's facts (the process
	//            table, the screen's render and classification) and the
	//            publish, which take mu themselves: it cannot be mu.
	//   mu       the session's fields, the machine, and the fields the
	//            drivers say it guards (the terminal's queued replies
	//            among them); held briefly, or inside locked.
	//   pty.writeMu  one writer on the PTY. A write blocks while the agent
	//            does not read: the pump must never wait on it, so the
	//            terminal's replies are queued under mu and written by
	//            their own goroutine.
	//   pty.outMu    a read of the PTY, the screen's update and the
	//            output's passing on as one step (a viewer's repaint,
	//            watch, falls between two reads, never inside one), and
	//            the PTY kept open over a read (pump.remove).
	// (The pump's own pump.mu and the emulator's lock are not a session's.)
	//
	// Lock order, outermost first: a goroutine holding one lock takes only
	// locks after it in its line.
	//   guardMu → updateMu → mu           (a guarded write decides afresh)
	//   guardMu → pty.writeMu             (then types)
	//   updateMu → pty.outMu → pump.mu    (finish lets go of the PTY)
	//   pty.outMu → emulator → mu         (output, the terminal's replies)
	//   pump.mu → emulator                (is a frame held? pump.takeDueLocked)
	// mu is let go of before pty.writeMu is taken (writeReplies).
	// The spans of mu that read outside data (process table, agent log)
	// or decide run inside locked, which lets go of mu however they end:
	// a recovered panic never leaves it held.
	guardMu  sync.Mutex // one guarded write (send, answer) at a time
	updateMu sync.Mutex // one decision-and-publish at a time, so states go out in order

	// mu guards everything below, and the drivers' fields they say.
	mu sync.Mutex

	// The decision (machine.go) and what was told of it.
	machine       machine
	lastPublished State
	exited        *ExitStatus
	exitedAt      time.Time
	// jobs are the process groups of the jobs a shell session ran (pty.go,
	// noteJobs) when it was told to end: ended with it.
	jobs          []int
	recheckQueued bool // a look is scheduled
	broken        bool // agentd failed inside this session's work: no more deciding

	// agent is the session's agent name where no manifest gives one (an
	// ACP agent's: the spawn's agent, else the one it gave in initialize).
	agent   string
	token   string   // the secret this session's reports carry
	env     []string // the environment the program started with
	started time.Time

	readDone chan struct{} // the agent's output has ended
	exitDone chan struct{} // the session has ended and been told
}

// driver is what differs between an agent in a terminal (ptyDriver) and
// one over ACP (acpDriver). The core asks it for the facts a look decides
// on and hands it the writes the guards allowed. What only one kind of
// driver can do is in the optional interfaces below it.
type driver interface {
	// start starts the agent of a session Spawn made; begin asks for its
	// first look once the session is listed.
	start(argv, env []string, spec SpawnSpec) error
	begin()
	// facts is what a look decides on; false when there is nothing to
	// decide on yet (an ACP agent whose login runs).
	facts() (facts, bool)
	// changed asks for a look soon: output or a report came.
	changed()
	// send gives the agent text the guard allowed (nothing blocks it).
	send(text string, submit bool) error
	// answer answers promptID, where st is the state just decided.
	answer(st State, promptID, optionID, text string) (State, error)
	signal(sig syscall.Signal) error
	// hangUp asks the agent to end; false when that ended the session
	// at once (there was no agent yet).
	hangUp() bool
	// release lets go of what the driver holds once the agent ended.
	release()
	// describe adds the driver's part to a snapshot of the session.
	describe(in *Info)
}

// terminal is a driver with a screen (ptyDriver): the session's screen
// methods (Screen, Resize, Input, Repaint, WatchOutput, Classify, Capture)
// reach it through Session.terminal, and refuse with ErrNoScreen where the
// driver has none. The pump does not go through it: it reads the
// ptyDrivers it registered (pump.add) directly, so a read costs no
// interface call.
type terminal interface {
	input(data string) error
	resize(cols, rows int) error
	screen() detect.Screen
	repaint(history bool) string
	classify() detect.Verdict
	// watch starts a viewer of the output (see WatchOutput).
	watch(start func(repaint string) (isNew bool))
	// captured is the output kept as text (SpawnSpec.capture), for an ACP
	// agent that reads its terminal's output.
	captured() (text string, truncated bool)
}

// turns is a driver that holds a conversation in turns (acpDriver):
// Prompt and Cancel reach it through Session.turns, and refuse with
// ErrNotACP where the driver has none.
type turns interface {
	prompt(text string) error
	cancel() error
}

// newDriver chooses the driver of a session Spawn makes, once: everything
// after it that differs between the kinds is the driver's.
func newDriver(s *Session, spec SpawnSpec) driver {
	if spec.ACP {
		return newACPDriver(s)
	}
	return newPTYDriver(s, spec.capture)
}

// terminal is the session's terminal, or ErrNoScreen.
func (s *Session) terminal() (terminal, error) {
	if t, ok := s.drv.(terminal); ok {
		return t, nil
	}
	return nil, ErrNoScreen
}

// turns is the session's conversation, or ErrNotACP.
func (s *Session) turns() (turns, error) {
	if t, ok := s.drv.(turns); ok {
		return t, nil
	}
	return nil, ErrNotACP
}

// ExitStatus is how the process ended.
type ExitStatus struct {
	Code   int    // -1 when killed by a signal
	Signal string // e.g. "SIGKILL", empty when it exited
}

// Info is a snapshot of a session for listing and notifications.
type Info struct {
	ID, Name, Agent string
	Argv            []string
	Cwd             string
	Pid             int
	Cols, Rows      int
	State           State
	Exit            *ExitStatus
	ExitedAt        time.Time
	Origin          Origin
	// AgentInfo is what an ACP agent said of itself in initialize.
	AgentInfo *acp.AgentInfo
	// Login is the session running the ACP agent's terminal login, if it
	// needed one.
	Login string
}

// poke asks for a look once the agent's output has settled.
func (s *Session) poke() { s.drv.changed() }

// testHookFault, when a test sets it, runs at each named point of a
// session's classification (faultPoints): the way a test puts a fault
// inside one session's work, as a bug or bad outside data would.
var testHookFault atomic.Pointer[func(s *Session, at string)]

// faultPoints are where testHookFault runs: at the start of an update, and
// inside each span that holds s.mu while it reads outside data or decides.
var faultPoints = []string{"update", "probe", "agent-log", "report", "decide", "acp"}

func (s *Session) faultPoint(at string) {
	if hook := testHookFault.Load(); hook != nil {
		(*hook)(s, at)
	}
}

// locked runs f with s.mu held and lets go of it however f ends: a panic
// in f (which contain recovers) must not leave the lock held, or contain's own
// locking and every later look at the session (session/list) would wait
// for ever.
func (s *Session) locked(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// contain runs one piece of a session's own work. A panic in it is a bug in
// agentd, not the agent's fault: it is logged, this session is marked
// error and stops being classified, and every other session goes on.
func (s *Session) contain(what string, f func()) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		s.mgr.opts.Log.Error("internal error in a session; it is no longer classified", "session", s.ID, "while", what, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		s.mu.Lock()
		s.broken = true
		st, changed := s.machine.failed(s.agentName(), time.Now())
		s.mu.Unlock()
		if changed {
			s.mgr.publish(s, st)
		}
	}()
	f()
}

func (s *Session) isBroken() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.broken
}

// update decides the session's state on what its driver finds now,
// publishes it if it changed, and looks again later where the decision
// asks to.
func (s *Session) update() State {
	st, again := s.look()
	if again > 0 {
		s.locked(func() { s.recheckLocked(again) })
	}
	return st
}

// look is one live decision: the facts the driver gathered, the machine
// stepped, a change published. It returns how soon the machine wants
// another look (see machine.step); scheduling it is update's.
func (s *Session) look() (State, time.Duration) {
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	s.faultPoint("update")
	f, ok := s.drv.facts()
	if !ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.machine.state, 0
	}
	return s.step(f)
}

// step advances the session's machine on f, which the driver filled, and
// publishes a change. It adds what the session knows: its rules, its
// agent's name, the time.
func (s *Session) step(f facts) (State, time.Duration) {
	var st State
	var changed bool
	var again time.Duration
	var drift, keep string
	s.locked(func() {
		f.rules, f.agent, f.now = s.manifest, s.agentName(), s.mgr.now()
		// Reports are weighed and the state decided in here.
		s.faultPoint("report")
		s.faultPoint("decide")
		st, changed, again = s.machine.step(f)
		drift, keep = s.machine.takeDrift(), s.machine.takeScreenDrift()
	})
	if d := drift; d != "" {
		s.mgr.opts.Log.Warn("drift: the agent's report and its screen name different subjects", "session", s.ID, "agent", st.Agent, "drift", d)
	}
	if keep != "" {
		s.keepScreen(keep)
	}
	if changed {
		s.mgr.publish(s, st)
	}
	return st, again
}

// setReport records a report from a hook or signal, and the subject of the
// tool call it is about where it names one, and classifies again.
// background: the report names work the agent started that still runs.
func (s *Session) setReport(reason string, rec detect.StatusRecord, subject *detect.Subject, background bool) {
	s.mu.Lock()
	s.machine.reported(report{source: SourceHook, reason: reason, rec: &rec, subject: subject, background: background}, s.mgr.now())
	s.mu.Unlock()
	s.poke()
}

// finish ends the session, whatever ran it, in one order: the state made
// final (final, or exited with how the process ended), the driver's hold
// let go of, the keeper told, clients told, the session kept listed for a
// while. It is called once, with updateMu held, by whatever saw the end.
func (s *Session) finish(st *ExitStatus, final State) {
	s.mu.Lock()
	if s.exited != nil {
		s.mu.Unlock()
		return
	}
	s.exited, s.exitedAt = st, time.Now()
	if final.Name == "" {
		final = State{Name: Exited, Source: SourceProcess, Reason: "process.exit"}
		if st.Signal != "" {
			final.Reason = "process.signal"
		}
	}
	final.Agent = s.agentName()
	state := s.machine.exited(final, s.exitedAt)
	s.mu.Unlock()
	s.drv.release()
	if s.Pid > 0 {
		s.mgr.tellKeeper('-', s.Pid)
	}
	s.mgr.publish(s, state)
	s.mgr.events.Exited(s.ID, *st)
	s.mgr.ended(s)
	close(s.exitDone)
}

// agentName is the name told as the session's agent.
func (s *Session) agentName() string {
	if s.agent != "" {
		return s.agent
	}
	return s.manifest.Name
}

// Info returns a snapshot of the session.
func (s *Session) Info() Info {
	var in Info
	s.drv.describe(&in)
	s.mu.Lock()
	defer s.mu.Unlock()
	in.ID, in.Name, in.Agent, in.Argv, in.Cwd, in.Pid = s.ID, s.Name, s.agentName(), s.Argv, s.Cwd, s.Pid
	in.State, in.Origin = s.machine.state, s.Origin
	if s.exited != nil {
		e := *s.exited
		in.Exit = &e
		in.ExitedAt = s.exitedAt
	}
	return in
}

// Screen is what the session's screen shows now, with a revision that
// changes whenever the state does.
func (s *Session) Screen() (detect.Screen, uint64, error) {
	t, err := s.terminal()
	if err != nil {
		return detect.Screen{}, 0, err
	}
	sc := t.screen()
	s.mu.Lock()
	defer s.mu.Unlock()
	return sc, s.machine.revision, nil
}

// Resize changes the terminal's size.
func (s *Session) Resize(cols, rows int) error {
	t, err := s.terminal()
	if err != nil {
		return err // no terminal to size
	}
	if cols < 2 || rows < 2 || cols > 1000 || rows > 1000 {
		return fmt.Errorf("size %dx%d: cols and rows must be between 2 and 1000", cols, rows)
	}
	if s.isExited() {
		return ErrExited
	}
	return t.resize(cols, rows)
}

// Input writes a person's keystrokes as they are. Typing counts as having
// seen the end of the last turn.
func (s *Session) Input(data string) error {
	t, err := s.terminal()
	if err != nil {
		return err // no terminal to type into
	}
	if s.isExited() {
		return ErrExited
	}
	s.markSeen(true)
	return t.input(data)
}

// Seen records that the person looked at the session: done becomes idle.
func (s *Session) Seen() State {
	s.markSeen(false)
	return s.update()
}

func (s *Session) markSeen(input bool) {
	s.mu.Lock()
	if input {
		s.machine.typed()
	} else {
		s.machine.sawEnd()
	}
	s.mu.Unlock()
	if input {
		s.poke()
	}
}

func (s *Session) isExited() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exited != nil
}

// Signal sends sig to the session's agent.
func (s *Session) Signal(sig syscall.Signal) error {
	if s.isExited() {
		return ErrExited
	}
	return s.drv.signal(sig)
}

// killAfter sends SIGKILL to the process group unless it exits within grace.
func (s *Session) killAfter(grace time.Duration) {
	deadline := time.Now().Add(grace)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-s.exitDone:
		s.endGroup(deadline)
	case <-t.C:
		if !s.isExited() {
			_ = syscall.Kill(-s.Pid, syscall.SIGKILL)
		}
		s.signalJobs(syscall.SIGKILL)
	}
}

// signalJobs sends sig to the jobs recorded in s.jobs that are still
// this session's: a group's id may have gone to another group once it
// emptied, so its leader must still be in the session (whose id is the
// session leader's pid). It reports whether any was signalled.
func (s *Session) signalJobs(sig syscall.Signal) bool {
	s.mu.Lock()
	jobs := s.jobs
	s.mu.Unlock()
	any := false
	for _, job := range jobs {
		if job <= 1 || job == s.Pid {
			continue
		}
		if sid, err := unix.Getsid(job); err != nil || sid != s.Pid {
			continue
		}
		any = syscall.Kill(-job, sig) == nil || any
	}
	return any
}

// endGroup waits, until deadline at most, for what is left of the process
// group once its leader has gone, then sends it SIGKILL: a leader may go at
// the hang-up while a child in its group goes on (Qwen's node under its
// launcher still wrote into its HOME seconds after its session exited). A
// group's id is not given to another process while the group has members.
func (s *Session) endGroup(deadline time.Time) {
	if s.Pid <= 1 {
		return // no group of its own to end (kill(0) would be agentd's)
	}
	for syscall.Kill(-s.Pid, 0) == nil || s.signalJobs(0) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-s.Pid, syscall.SIGKILL)
			s.signalJobs(syscall.SIGKILL)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Exited is closed once the process is reaped and reported.
func (s *Session) Exited() <-chan struct{} { return s.exitDone }

// stop ends the session: the driver's hang-up, then SIGKILL to the
// process group after grace.
func (s *Session) stop(grace time.Duration) {
	if s.isExited() || !s.drv.hangUp() {
		return
	}
	deadline := time.Now().Add(grace)
	select {
	case <-s.exitDone:
		s.endGroup(deadline)
		return
	case <-time.After(grace):
	}
	_ = syscall.Kill(-s.Pid, syscall.SIGKILL)
	s.signalJobs(syscall.SIGKILL)
	<-s.exitDone
	s.endGroup(time.Now())
}

// signals are the ones session/kill accepts by name.
var signals = map[string]syscall.Signal{
	"SIGHUP": syscall.SIGHUP, "SIGINT": syscall.SIGINT, "SIGQUIT": syscall.SIGQUIT,
	"SIGKILL": syscall.SIGKILL, "SIGTERM": syscall.SIGTERM, "SIGUSR1": syscall.SIGUSR1,
	"SIGUSR2": syscall.SIGUSR2, "SIGCONT": syscall.SIGCONT, "SIGSTOP": syscall.SIGSTOP,
	"SIGWINCH": syscall.SIGWINCH,
}

// ParseSignal reads a signal name ("SIGTERM" or "TERM"); empty means SIGHUP,
// what a closing terminal sends.
func ParseSignal(name string) (syscall.Signal, error) {
	if name == "" {
		return syscall.SIGHUP, nil
	}
	if s, ok := signals[name]; ok {
		return s, nil
	}
	if s, ok := signals["SIG"+name]; ok {
		return s, nil
	}
	return 0, fmt.Errorf("unknown signal %q", name)
}

// Classify returns a fresh verdict of the screen as it is now.
func (s *Session) Classify() (detect.Verdict, error) {
	t, err := s.terminal()
	if err != nil {
		return detect.Verdict{}, err
	}
	return t.classify(), nil
}

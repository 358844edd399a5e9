// Package sessions hosts agents: one Session per agent, each with a PTY, an
// emulated screen, the terminal's replies, a classifier that runs when the
// screen changes, and guarded writes.
package sessions

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/agentd/agentd/acp"
	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/sessions/program"
	"github.com/agentd/agentd/sessions/term"
)

// Session is one hosted agent.
type Session struct {
	ID     string
	Name   string
	Argv   []string
	Cwd    string
	Pid    int
	Origin Origin

	mgr      *Manager
	cmd      *exec.Cmd
	proc     *os.Process // an adopted session's agent (handover.go); cmd is nil then
	ptmx     *os.File
	term     *term.Terminal   // nil for an ACP session
	acp      *acpState        // nil for a PTY session
	manifest *detect.Manifest // the rules in use now
	base     *detect.Manifest // the rules of the program spawned
	isShell  bool             // the program spawned is a shell: follow its foreground

	// Lock order, outermost first: a goroutine holding one lock takes only
	// locks after it in its line.
	//   guardMu → updateMu → mu       (a guarded write classifies afresh)
	//   guardMu → writeMu             (then types)
	//   outMu → pump.mu, rd.mu → pump.mu
	//   replyMu is let go of before writeMu is taken.
	// The spans of mu that read outside data (process table, agent log,
	// reports) or decide run inside locked, which lets go of mu however
	// they end: a recovered panic never leaves it held.
	writeMu  sync.Mutex // one writer on the PTY at a time
	replyMu  sync.Mutex // guards replies and replying
	replies  []byte     // the terminal's answers not yet written
	replying bool       // writeReplies runs
	outMu    sync.Mutex // output is applied to the screen and passed on as one step
	guardMu  sync.Mutex // one guarded write (send, answer) at a time
	updateMu sync.Mutex // one classification-and-publish at a time, so states go out in order

	// mu guards everything below.
	mu sync.Mutex

	// The decision (machine.go) and what was told of it.
	machine       machine
	lastPublished State
	exited        *ExitStatus
	exitedAt      time.Time
	verdicts      verdictCache
	token         string      // the secret this session's reports carry
	agentLog      *rolloutLog // the agent's own log, for agents that keep one

	// The process table, for a shell session.
	fg            foreground
	probedAt      time.Time
	probeMiss     int
	recheckQueued bool // a classification is scheduled

	broken  bool     // agentd failed inside this session's work: no more classifying
	env     []string // the environment the program started with
	started time.Time
	outTail []byte         // an unfinished UTF-8 rune held back from output
	capture *outputCapture // output kept as text, for an ACP agent's terminal

	sched    schedule   // when the pump classifies this session next
	rd       ptyReading // the PTY as the pump reads it
	readDone chan struct{}
	exitDone chan struct{}
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

func (s *Session) start(argv, env []string, cols, rows int) error {
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Dir = s.Cwd
	s.cmd.Env = env
	s.env = env
	s.started = time.Now()
	s.term = term.New(term.Options{Cols: cols, Rows: rows, Reply: s.reply})
	ptmx, err := pty.StartWithSize(s.cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		return err
	}
	s.Pid = s.cmd.Process.Pid
	var fd int
	if s.ptmx, fd, err = pollable(ptmx); err == nil {
		s.readDone = make(chan struct{})
		s.exitDone = make(chan struct{})
		if err = s.mgr.pump.add(s, fd); err != nil {
			s.ptmx.Close()
		}
	}
	if err != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		_ = s.cmd.Wait()
		return err
	}
	if every := s.mgr.opts.DetectPoll; every > 0 {
		go s.pollLoop(every)
	}
	go s.waitLoop()
	// Classify once even if the program never writes: a silent program
	// must not stay "starting" for ever.
	s.poke()
	return nil
}

// pollable returns the PTY master as a non-blocking file (served by Go's
// poller, for writes) and its descriptor (read by the pump). creack/pty
// hands it over in blocking mode, where every call may hold an OS thread.
// Nothing may call Fd on the file: that makes it blocking again (see
// setSize).
func pollable(f *os.File) (*os.File, int, error) {
	defer f.Close()
	raw, err := f.SyscallConn()
	if err != nil {
		return nil, 0, err
	}
	var fd int
	var dupErr error
	if err := raw.Control(func(orig uintptr) { fd, dupErr = syscall.Dup(int(orig)) }); err != nil {
		return nil, 0, err
	}
	if dupErr != nil {
		return nil, 0, dupErr
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, 0, err
	}
	return os.NewFile(uintptr(fd), f.Name()), fd, nil
}

// readyRecheck is how soon a session whose composer is drawn but whose
// terminal is still in line mode looks again.
const readyRecheck = 50 * time.Millisecond

// canonical reports whether the PTY is still in line mode (ICANON): the
// program on it has not taken its input raw yet. A descriptor that cannot
// tell counts as raw, so nothing waits on it.
func canonical(f *os.File) bool {
	if f == nil {
		return false
	}
	raw, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var t *unix.Termios
	var ioErr error
	if err := raw.Control(func(fd uintptr) { t, ioErr = unix.IoctlGetTermios(int(fd), termiosGet) }); err != nil || ioErr != nil {
		return false
	}
	return t.Lflag&unix.ICANON != 0
}

// setSize sets the PTY's window size. pty.Setsize would call Fd, which
// turns the descriptor blocking, and a blocking read would hang the pump.
func setSize(f *os.File, cols, rows int) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	err = raw.Control(func(fd uintptr) {
		ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	})
	if err != nil {
		return err
	}
	return ioErr
}

// reply writes the terminal's answer to a query back to the agent. It is
// called by the pump, which must not wait on an agent that does not read
// its input: the answer is queued and written by a goroutine of its own.
func (s *Session) reply(b []byte) {
	s.replyMu.Lock()
	s.replies = append(s.replies, b...)
	start := !s.replying
	s.replying = true
	s.replyMu.Unlock()
	if start {
		go s.writeReplies()
	}
}

// writeReplies writes the queued answers, in order, until none is left.
func (s *Session) writeReplies() {
	for {
		s.replyMu.Lock()
		b := s.replies
		s.replies = nil
		if len(b) == 0 {
			s.replying = false
			s.replyMu.Unlock()
			return
		}
		s.replyMu.Unlock()
		s.writeMu.Lock()
		_, _ = s.ptmx.Write(b)
		s.writeMu.Unlock()
	}
}

// readPTY reads what the agent wrote, for the pump. It returns 0 and no
// error when there is nothing to read.
func (s *Session) readPTY(buf []byte) (int, error) {
	s.rd.mu.Lock()
	defer s.rd.mu.Unlock()
	if !s.rd.open {
		return 0, os.ErrClosed
	}
	for {
		// A raw system call: the descriptor is non-blocking, so the
		// runtime's work around a call that might block (and the monitor
		// thread it wakes) is all cost.
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(s.rd.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		switch {
		case e == syscall.EINTR:
			continue
		case e == syscall.EAGAIN:
			return 0, nil
		case e != 0:
			return 0, e // EIO: the agent and all it started closed the PTY
		case r == 0:
			return 0, io.EOF
		}
		return int(r), nil
	}
}

// took applies output the agent wrote to the screen, passes it on, and asks
// for classification.
func (s *Session) took(b []byte) {
	s.outMu.Lock()
	if !s.isBroken() {
		s.guard("reading output", func() { s.term.Write(b) })
	}
	s.emitOutput(b)
	s.outMu.Unlock()
	if s.capture != nil {
		s.mu.Lock()
		s.capture.add(b)
		s.mu.Unlock()
	}
	s.poke()
}

// poke asks for the screen to be classified once output has settled.
func (s *Session) poke() {
	if s.term == nil || s.mgr.opts.DetectPoll > 0 {
		// An ACP session decides on its messages; a poller looks on its
		// own clock.
		return
	}
	s.mgr.pump.changed(s)
}

// emitOutput passes output to subscribers cut at rune boundaries, so a
// JSON string never carries half a character.
func (s *Session) emitOutput(b []byte) {
	if !s.mgr.hasOutputSubscribers(s.ID) {
		return
	}
	s.mu.Lock()
	data := append(s.outTail, b...)
	cut := len(data)
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				cut = i
			}
			break
		}
	}
	s.outTail = append([]byte(nil), data[cut:]...)
	s.mu.Unlock()
	if cut > 0 {
		s.mgr.events.Output(s.ID, string(data[:cut]))
	}
}

// pollLoop classifies for Options.DetectPoll (benchmarks only): render and
// classify on every tick, changed or not.
func (s *Session) pollLoop(every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-s.readDone:
			return
		}
		if s.isBroken() {
			return
		}
		s.guard("classifying", func() { s.update() })
	}
}

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
// in f (which guard recovers) must not leave the lock held, or guard's own
// locking and every later look at the session (session/list) would wait
// for ever.
func (s *Session) locked(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// guard runs one piece of a session's own work. A panic in it is a bug in
// agentd, not the agent's fault: it is logged, this session is marked
// error and stops being classified, and every other session goes on.
func (s *Session) guard(what string, f func()) {
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

// look is one live decision: the facts gathered, the machine stepped, a
// change published. It returns how soon the machine wants another look
// (see machine.step); scheduling it is update's.
func (s *Session) look() (State, time.Duration) {
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	s.faultPoint("update")
	if s.acp != nil {
		return s.lookACP()
	}
	var fg foreground
	s.locked(func() {
		fg = s.probeLocked()
		s.followForegroundLocked(fg)
		s.readAgentLogLocked()
	})
	v, sc := s.classifyNow()
	canon := false
	s.locked(func() {
		if !s.machine.inputRaw && s.manifest.Input.Raw && v.State == detect.StateIdle {
			canon = canonical(s.ptmx)
		}
	})
	return s.step(facts{screen: v, status: sc.Status, statusSeq: sc.StatusSeq, canonical: canon, fg: fg})
}

// step advances the session's machine on f, which the driver filled, and
// publishes a change. It adds what the session knows: its rules, its
// agent's name, the time.
func (s *Session) step(f facts) (State, time.Duration) {
	var st State
	var changed bool
	var again time.Duration
	s.locked(func() {
		f.rules, f.agent, f.now = s.manifest, s.agentName(), s.mgr.now()
		// Reports are weighed and the state decided in here.
		s.faultPoint("report")
		s.faultPoint("decide")
		st, changed, again = s.machine.step(f)
	})
	if changed {
		s.mgr.publish(s, st)
	}
	return st, again
}

// readAgentLogLocked takes the newest turn event from the agent's own log
// as a report, for agents whose manifest names a log agentd reads
// ([reports] log).
func (s *Session) readAgentLogLocked() {
	s.faultPoint("agent-log")
	if s.manifest.Reports.Log != detect.LogCodexRollout {
		return
	}
	if s.agentLog == nil {
		if s.agentLog = newRolloutLog(s.env, s.Cwd, s.started); s.agentLog == nil {
			return
		}
	}
	rep, wait := s.agentLog.poll(s.ID)
	if wait > 0 {
		s.recheckLocked(wait)
		return
	}
	if rep != nil {
		s.machine.reported(*rep)
		s.mgr.opts.Log.Info("report", "session", s.ID, "kind", "log", "event", rep.reason)
	}
}

// followForegroundLocked switches a shell session to the rules of the agent
// running in it, and back when the shell is in the foreground again.
func (s *Session) followForegroundLocked(fg foreground) {
	next := s.manifest
	switch {
	case fg.agent != nil:
		next = fg.agent
	case fg.shell || fg.job:
		next = s.base
	}
	if next != s.manifest {
		s.manifest = next
		s.machine.rulesChanged()
	}
}

// setReport records a report from a hook or signal and classifies again.
func (s *Session) setReport(reason string, rec detect.StatusRecord) {
	s.mu.Lock()
	s.machine.reported(report{source: SourceHook, reason: reason, rec: &rec})
	s.mu.Unlock()
	s.poke()
}

// classifyNow renders and classifies the screen as it is at this moment.
func (s *Session) classifyNow() (detect.Verdict, detect.Screen) {
	if s.mgr.opts.DetectPoll > 0 {
		// A poller knows nothing of what changed: render every row and
		// classify every time.
		sc := s.term.SnapshotAll()
		s.mu.Lock()
		m := s.manifest
		s.mu.Unlock()
		return m.Classify(sc), sc
	}
	sc := s.term.Snapshot()
	s.mu.Lock()
	m := s.manifest
	v, ok := s.verdicts.lookup(m, sc)
	s.mu.Unlock()
	if ok {
		return v, sc
	}
	v = m.Classify(sc)
	s.mu.Lock()
	s.verdicts.store(m, sc, v)
	s.mu.Unlock()
	return v, sc
}

func (s *Session) waitLoop() {
	awaitExit(s.Pid)
	st := s.wait()
	// Drain what the agent wrote last; a grandchild may hold the PTY open,
	// so do not wait for it long.
	select {
	case <-s.readDone:
	case <-time.After(500 * time.Millisecond):
	}
	s.update()
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	s.mu.Lock()
	exitState := s.exitedLocked(st)
	s.mu.Unlock()
	s.mgr.pump.remove(s)
	_ = s.ptmx.Close()
	// The group may still hold processes that left the session leader
	// behind; end them now rather than leave them to the keeper.
	_ = syscall.Kill(-s.Pid, syscall.SIGHUP)
	s.mgr.tellKeeper('-', s.Pid)
	if s.agentLog != nil {
		s.agentLog.release()
	}
	s.mgr.publish(s, exitState)
	s.mgr.events.Exited(s.ID, *st)
	s.mgr.ended(s)
	close(s.exitDone)
}

// wait reaps the session's agent and says how it ended.
func (s *Session) wait() *ExitStatus {
	// An exit status other than 0 is an error to Wait, not here: the
	// ProcessState says how it ended, and is nil only when waiting failed.
	var ps *os.ProcessState
	if s.cmd != nil {
		_ = s.cmd.Wait()
		ps = s.cmd.ProcessState
	} else {
		// Adopted in a handover: still our child, as the process is the
		// same. One that ended while the sessions were frozen may have
		// been reaped by the code before; its status is then lost.
		ps, _ = s.proc.Wait()
	}
	if ps == nil {
		return &ExitStatus{Code: -1}
	}
	st := &ExitStatus{Code: ps.ExitCode()}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		st.Code = -1
		st.Signal = program.SignalName(ws.Signal())
	}
	return st
}

// exitedLocked records that the session's process ended, PTY or ACP
// alike: exited is its final state.
func (s *Session) exitedLocked(st *ExitStatus) State {
	s.exited = st
	s.exitedAt = time.Now()
	reason := "process.exit"
	if st.Signal != "" {
		reason = "process.signal"
	}
	return s.machine.exited(State{Agent: s.agentName(), Name: Exited, Source: SourceProcess, Reason: reason}, s.exitedAt)
}

// IsACP reports whether the session speaks ACP rather than running in a PTY.
func (s *Session) IsACP() bool { return s.acp != nil }

// Info returns a snapshot of the session.
func (s *Session) Info() Info {
	var cols, rows int
	if s.term != nil {
		cols, rows = s.term.Size()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := Info{ID: s.ID, Name: s.Name, Agent: s.agentName(), Argv: s.Argv, Cwd: s.Cwd, Pid: s.Pid, Cols: cols, Rows: rows, State: s.machine.state, Origin: s.Origin}
	if s.acp != nil {
		info := s.acp.info
		in.AgentInfo = &info
		in.Login = s.acp.login
	}
	if s.exited != nil {
		e := *s.exited
		in.Exit = &e
		in.ExitedAt = s.exitedAt
	}
	return in
}

// Screen is what the session's screen shows now, with a revision that
// changes whenever the state does.
func (s *Session) Screen() (detect.Screen, uint64) {
	sc := s.term.Snapshot()
	s.mu.Lock()
	defer s.mu.Unlock()
	return sc, s.machine.revision
}

// Resize changes the PTY and emulator size.
func (s *Session) Resize(cols, rows int) error {
	if s.acp != nil {
		return ErrNoScreen
	}
	if cols < 2 || rows < 2 || cols > 1000 || rows > 1000 {
		return fmt.Errorf("size %dx%d: cols and rows must be between 2 and 1000", cols, rows)
	}
	if s.isExited() {
		return ErrExited
	}
	s.term.Resize(cols, rows)
	if err := setSize(s.ptmx, cols, rows); err != nil {
		return err
	}
	s.poke()
	return nil
}

// Input writes a person's keystrokes as they are. Typing counts as having
// seen the end of the last turn.
func (s *Session) Input(data string) error {
	if s.acp != nil {
		return ErrNoScreen
	}
	if s.isExited() {
		return ErrExited
	}
	s.markSeen(true)
	return s.write([]byte(data))
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

func (s *Session) write(b []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	_, err := s.ptmx.Write(b)
	return err
}

func (s *Session) isExited() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exited != nil
}

// Signal sends sig to the session's process group.
func (s *Session) Signal(sig syscall.Signal) error {
	if s.isExited() {
		return ErrExited
	}
	if s.acp != nil {
		return s.signalACP(sig)
	}
	if err := syscall.Kill(-s.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	if sig == syscall.SIGHUP {
		// A hang-up ends the session (session/kill's default): a group
		// that ignores it gets SIGKILL after the grace, as at shutdown.
		go s.killAfter(s.mgr.opts.Grace)
	}
	return nil
}

// killAfter sends SIGKILL to the process group unless it exits within grace.
func (s *Session) killAfter(grace time.Duration) {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-s.exitDone:
	case <-t.C:
		if !s.isExited() {
			_ = syscall.Kill(-s.Pid, syscall.SIGKILL)
		}
	}
}

// Exited is closed once the process is reaped and reported.
func (s *Session) Exited() <-chan struct{} { return s.exitDone }

// stop ends the process group: SIGHUP, then SIGKILL after grace.
func (s *Session) stop(grace time.Duration) {
	if s.isExited() {
		return
	}
	if s.acp != nil {
		c := s.acpClient()
		if c == nil {
			s.endLogin(loginStopped)
			return
		}
		_ = c.Close() // stdin closed, SIGHUP, SIGKILL in time
	} else {
		_ = syscall.Kill(-s.Pid, syscall.SIGHUP)
	}
	select {
	case <-s.exitDone:
		return
	case <-time.After(grace):
	}
	_ = syscall.Kill(-s.Pid, syscall.SIGKILL)
	<-s.exitDone
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
	if s.acp != nil {
		return detect.Verdict{}, ErrNoScreen
	}
	v, _ := s.classifyNow()
	return v, nil
}

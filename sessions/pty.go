package sessions

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/sessions/agentreports"
	"github.com/agentd/agentd/sessions/program"
	"github.com/agentd/agentd/sessions/term"
)

// ptyDriver runs an agent in a pseudo-terminal: the pump reads what it
// writes into an emulated screen, the screen (with the process table, the
// reports and the agent's log) is what a look decides on, and an allowed
// write is typed as keys. Its two locks, writeMu and outMu, are in
// Session's lock order (session.go), with why each exists.
type ptyDriver struct {
	s *Session

	cmd     *exec.Cmd
	proc    *os.Process // an adopted session's agent (handover.go); cmd is nil then
	ptmx    *ptyMaster
	term    *term.Terminal
	isShell bool // the program spawned is a shell: follow its foreground

	writeMu sync.Mutex // one writer on the PTY at a time
	// outMu makes a read of the PTY, the screen's update and the output's
	// passing on one step, and keeps the PTY open over a read (rd).
	outMu sync.Mutex
	rd    ptyReading // the PTY as the pump reads it (outMu)
	sched schedule   // when the pump classifies this session next (pump.mu)
	// resized: the terminal changed size and the agent has written nothing
	// since. The screen is then the old frame cut or padded to the new
	// size, which no agent drew: it is not read (classifyNow).
	resized atomic.Bool

	// Guarded by the session's mu.
	replies  []byte // the terminal's answers not yet written
	replying bool   // writeReplies runs
	verdicts verdictCache
	agentLog agentreports.Log // the agent's own log, for agents that keep one
	outTail  []byte           // an unfinished UTF-8 rune held back from output
	// capture keeps output as text, for a terminal an ACP agent runs.
	capture *outputCapture
	// The process table, for a shell session.
	fg        foreground
	probedAt  time.Time
	probeMiss int
	cpu       cpuReading
}

// cpuReading is a session's reading of its agent's CPU time, taken off the
// pump (readCPU), guarded by the session's mu. Why off it: the reading
// walks the process table, about 10 µs a process, so 7 ms where 700
// processes run, and on macOS it runs ps; on the pump that held every
// session's output and classification back for as long.
type cpuReading struct {
	askedAt time.Time // when the latest reading was asked for
	taking  bool      // a reading is under way
	took    bool      // a reading came that no look has used yet
	cpu     time.Duration
	at      time.Time
	found   bool
}

// newPTYDriver is s's terminal driver; capture > 0 keeps that much of the
// output as text (SpawnSpec.capture).
func newPTYDriver(s *Session, capture int) *ptyDriver {
	d := &ptyDriver{s: s, isShell: s.base.Identify.Shell}
	if capture > 0 {
		d.capture = &outputCapture{limit: capture}
	}
	return d
}

// ptyOf is s's terminal driver, nil for a session with another driver:
// the one place code outside the driver (the handover, which carries only
// terminal sessions, and tests) reaches the concrete driver.
func ptyOf(s *Session) *ptyDriver {
	d, _ := s.drv.(*ptyDriver)
	return d
}

// facts reads what a look decides on: the process table and the agent's
// log (under the session's lock, which locked lets go of however they
// end), then the screen.
func (d *ptyDriver) facts() (facts, bool) {
	s := d.s
	var fg foreground
	s.locked(func() {
		fg = d.probeLocked()
		d.followForegroundLocked(fg)
		d.readAgentLogLocked()
	})
	v, sc := d.classifyNow()
	f := facts{screen: v, status: sc.Status, statusSeq: sc.StatusSeq, fg: fg}
	s.locked(func() {
		if !s.machine.inputRaw && s.manifest.Input.Raw && v.State == detect.StateIdle {
			f.canonical = canonical(d.ptmx)
		}
		// A look uses the reading that came since the last one, and asks
		// for the next at most once a busyLook: a streaming screen
		// classifies far more often. The reading is a look late, which
		// the busy window does not mind: it is measured between the
		// readings' own times (cpuAt).
		if c := &d.cpu; c.took {
			f.cpu, f.cpuAt, f.cpuRead = c.cpu, c.at, c.found
			c.took = false
		}
		if c := &d.cpu; s.machine.watchCPU && !c.taking && time.Since(c.askedAt) >= busyLook {
			c.taking, c.askedAt = true, time.Now()
			go d.readCPU(s.Pid)
		}
	})
	return f, true
}

// readCPU reads the CPU time of terminal session sid for the next look.
func (d *ptyDriver) readCPU(sid int) {
	cpu, at, found := sessionCPU(sid)
	d.s.locked(func() {
		d.cpu = cpuReading{askedAt: d.cpu.askedAt, took: true, cpu: cpu, at: at, found: found}
	})
}

// changed asks the pump to classify once output has settled.
func (d *ptyDriver) changed() {
	if d.s.mgr.opts.DetectPoll > 0 {
		return // a poller looks on its own clock
	}
	d.s.mgr.pump.changed(d)
}

func (d *ptyDriver) input(data string) error { return d.write([]byte(data)) }

// resize sizes the screen and the PTY. It asks for no classification: what
// the agent draws at the new size (its SIGWINCH repaint) will, and until
// then the verdict of the last frame it drew stands. Read at once, the old
// frame cut to the new size reads as another prompt, or none, and back
// again a moment later: a change told to every client, a notice popped,
// an answer in flight refused.
func (d *ptyDriver) resize(cols, rows int) error {
	if c, r := d.term.Size(); c == cols && r == rows {
		return nil
	}
	d.resized.Store(true)
	d.term.Resize(cols, rows)
	return setSize(d.ptmx, cols, rows)
}

func (d *ptyDriver) screen() detect.Screen { return d.term.Snapshot() }

func (d *ptyDriver) repaint(history bool) string { return string(d.term.Repaint(history)) }

// classify is the verdict of the screen as it is, for a client that reads
// it whole (session/classify, a capture): read afresh, as the verdict the
// cache carries over a spinner's turn may name the glyph it saw in its
// Evidence (verdictCache).
func (d *ptyDriver) classify() detect.Verdict {
	sc := d.term.Snapshot()
	s := d.s
	s.mu.Lock()
	m := s.manifest
	s.mu.Unlock()
	return m.Classify(sc)
}

func (d *ptyDriver) signal(sig syscall.Signal) error {
	s := d.s
	if err := syscall.Kill(-s.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	d.noteJobs()
	s.signalJobs(sig)
	if sig == syscall.SIGHUP {
		// A hang-up ends the session (session/kill's default): a group
		// that ignores it gets SIGKILL after the grace, as at shutdown.
		go s.killAfter(s.mgr.opts.Grace)
	}
	return nil
}

// hangUp sends the process group SIGHUP, what a closing terminal sends.
func (d *ptyDriver) hangUp() bool {
	_ = syscall.Kill(-d.s.Pid, syscall.SIGHUP)
	d.noteJobs()
	d.s.signalJobs(syscall.SIGHUP)
	return true
}

// noteJobs records the process groups of the session's jobs: what its
// shell runs (an agent started from the shell) in groups of their own,
// which a signal to the session's group does not reach and which may
// ignore the hang-up the shell passes on (Kilo does). They are read from
// the process table, not from the terminal's foreground: a job the shell
// just started may not have the terminal yet, and one in the background
// never has.
func (d *ptyDriver) noteJobs() {
	found := sessionJobs(d.s.Pid)
	if len(found) == 0 {
		return
	}
	d.s.mu.Lock()
	for _, g := range found {
		if !slices.Contains(d.s.jobs, g) {
			d.s.jobs = append(d.s.jobs, g)
		}
	}
	d.s.mu.Unlock()
}

// release stops reading the PTY and ends what is left of the group.
func (d *ptyDriver) release() {
	s := d.s
	s.mgr.pump.remove(d)
	d.noteJobs()
	_ = d.ptmx.Close()
	// The group may still hold processes that left the session leader
	// behind; end them now rather than leave them to the keeper.
	_ = syscall.Kill(-s.Pid, syscall.SIGHUP)
	s.signalJobs(syscall.SIGHUP)
	if d.agentLog != nil {
		d.agentLog.Release()
	}
}

func (d *ptyDriver) describe(in *Info) { in.Cols, in.Rows = d.term.Size() }

// start runs argv in a new PTY of the spawn's size and starts reading it.
// An agent whose manifest names a kind of hooks agentd gives is given
// them, where there is a report socket to send them to (the session has a
// token) and the spawn did not turn them off.
func (d *ptyDriver) start(argv, env []string, spec SpawnSpec) error {
	s := d.s
	cols, rows := spec.Cols, spec.Rows
	if s.token != "" && (spec.Hooks == nil || *spec.Hooks) {
		if h, ok := agentreports.HooksFor(s.base.Reports.Hooks); ok {
			argv = append(argv, h.Args(s.mgr.opts.Self)...)
		}
	}
	d.cmd = exec.Command(argv[0], argv[1:]...)
	d.cmd.Dir = s.Cwd
	d.cmd.Env = env
	s.env = env
	s.started = time.Now()
	d.term = term.New(term.Options{Cols: cols, Rows: rows, Reply: d.reply})
	ptmx, err := pty.StartWithSize(d.cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		return err
	}
	s.Pid = d.cmd.Process.Pid
	var fd int
	if d.ptmx, fd, err = pollable(ptmx); err == nil {
		s.readDone = make(chan struct{})
		s.exitDone = make(chan struct{})
		if err = s.mgr.pump.add(d, fd); err != nil {
			d.ptmx.Close()
		}
	}
	if err != nil {
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		_ = d.cmd.Wait()
		return err
	}
	if every := s.mgr.opts.DetectPoll; every > 0 {
		go d.pollLoop(every)
	}
	go d.waitLoop()
	return nil
}

// begin classifies once even if the program never writes: a silent
// program must not stay "starting" for ever.
func (d *ptyDriver) begin() { d.s.poke() }

// reply writes the terminal's answer to a query back to the agent. It is
// called by the pump, which must not wait on an agent that does not read
// its input: the answer is queued and written by a goroutine of its own.
func (d *ptyDriver) reply(b []byte) {
	s := d.s
	s.mu.Lock()
	d.replies = append(d.replies, b...)
	start := !d.replying
	d.replying = true
	s.mu.Unlock()
	if start {
		go d.writeReplies()
	}
}

// writeReplies writes the queued answers, in order, until none is left.
func (d *ptyDriver) writeReplies() {
	s := d.s
	for {
		s.mu.Lock()
		b := d.replies
		d.replies = nil
		if len(b) == 0 {
			d.replying = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		d.writeMu.Lock()
		_, _ = d.ptmx.Write(b)
		d.writeMu.Unlock()
	}
}

// read reads what the agent wrote into buf, for the pump, and takes it in
// (tookLocked), all under outMu. It returns 0 and no error when there is nothing
// to read.
func (d *ptyDriver) read(buf []byte) (int, error) {
	d.outMu.Lock()
	n, err := d.readLocked(buf)
	if n > 0 {
		d.tookLocked(buf[:n])
	}
	d.outMu.Unlock()
	if n > 0 {
		d.afterOutput(buf[:n])
	}
	return n, err
}

// readLocked makes one read of the PTY, with outMu held.
func (d *ptyDriver) readLocked(buf []byte) (int, error) {
	if !d.rd.open {
		return 0, os.ErrClosed
	}
	for {
		// A raw system call: the descriptor is non-blocking, so the
		// runtime's work around a call that might block (and the monitor
		// thread it wakes) is all cost.
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(d.rd.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
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

// tookLocked applies output the agent wrote to the screen and passes it
// on, with outMu held.
func (d *ptyDriver) tookLocked(b []byte) {
	s := d.s
	if !s.isBroken() {
		s.contain("reading output", func() { d.term.Write(b) })
	}
	if d.resized.Load() {
		d.resized.Store(false)
	}
	d.emitOutput(b)
}

// afterOutput keeps output for a terminal an ACP agent reads, and asks for
// classification.
func (d *ptyDriver) afterOutput(b []byte) {
	s := d.s
	if d.capture != nil {
		s.mu.Lock()
		d.capture.add(b)
		s.mu.Unlock()
	}
	s.poke()
}

// emitOutput passes output to subscribers cut at rune boundaries, so a
// JSON string never carries half a character.
func (d *ptyDriver) emitOutput(b []byte) {
	s := d.s
	if !s.mgr.hasOutputSubscribers(s.ID) {
		return
	}
	s.mu.Lock()
	data := append(d.outTail, b...)
	cut := len(data)
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				cut = i
			}
			break
		}
	}
	d.outTail = append([]byte(nil), data[cut:]...)
	s.mu.Unlock()
	if cut > 0 {
		s.mgr.events.Output(s.ID, string(data[:cut]))
	}
}

// pollLoop classifies for Options.DetectPoll (benchmarks only): render and
// classify on every tick, changed or not.
func (d *ptyDriver) pollLoop(every time.Duration) {
	s := d.s
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
		s.contain("classifying", func() { s.update() })
	}
}

// readAgentLogLocked takes the newest turn event from the agent's own log
// as a report, for agents whose manifest names a log agentd reads
// ([reports] log; agentreports reads it).
func (d *ptyDriver) readAgentLogLocked() {
	s := d.s
	s.faultPoint("agent-log")
	kind := s.manifest.Reports.Log
	if kind == "" {
		return
	}
	if d.agentLog == nil {
		if d.agentLog = agentreports.OpenLog(kind, s.env, s.Cwd, s.started); d.agentLog == nil {
			return
		}
	}
	ev, wait := d.agentLog.Poll(s.ID)
	if wait > 0 {
		s.recheckLocked(wait)
		return
	}
	if ev != nil {
		rec := ev.Record
		s.machine.reported(report{source: SourceLog, reason: ev.Reason, at: ev.At, rec: &rec, outcome: ev.Outcome}, s.mgr.now())
		s.mgr.opts.Log.Info("report", "session", s.ID, "kind", "log", "event", ev.Reason)
	}
}

// followForegroundLocked switches a shell session to the rules of the agent
// running in it, and back when the shell is in the foreground again.
func (d *ptyDriver) followForegroundLocked(fg foreground) {
	s := d.s
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

// classifyNow renders and classifies the screen as it is at this moment.
func (d *ptyDriver) classifyNow() (detect.Verdict, detect.Screen) {
	s := d.s
	if s.mgr.opts.DetectPoll > 0 {
		// A poller knows nothing of what changed: render every row and
		// classify every time.
		sc := d.term.SnapshotAll()
		s.mu.Lock()
		m := s.manifest
		s.mu.Unlock()
		return m.Classify(sc), sc
	}
	sc := d.term.Snapshot()
	s.mu.Lock()
	m := s.manifest
	if d.resized.Load() && d.verdicts.m == m {
		v := d.verdicts.v // the last frame the agent drew (resize)
		s.mu.Unlock()
		return v, sc
	}
	v, why := d.verdicts.lookup(m, sc)
	s.mu.Unlock()
	if why != reuseNone {
		return v, sc
	}
	v = m.Classify(sc)
	s.mu.Lock()
	d.verdicts.store(m, sc, v)
	s.mu.Unlock()
	return v, sc
}

func (d *ptyDriver) waitLoop() {
	s := d.s
	awaitExit(s.Pid)
	st := d.wait()
	// Drain what the agent wrote last; a grandchild may hold the PTY open,
	// so do not wait for it long.
	select {
	case <-s.readDone:
	case <-time.After(500 * time.Millisecond):
	}
	s.update()
	s.updateMu.Lock()
	defer s.updateMu.Unlock()
	s.finish(st, State{})
}

// awaitNotChild waits for the end of an agent that is not this process's
// child: a daemon that recovered the sessions of one that died after a
// handover (docs/upgrade.md, "If the new code dies") adopted agents whose
// parent had gone. It cannot wait for them, so their end is their pid
// going, or their terminal closing (init may leave a zombie unreaped), and
// their exit status is lost.
func awaitNotChild(pid int, closed <-chan struct{}) {
	for {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		select {
		case <-closed:
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// wait reaps the session's agent and says how it ended.
func (d *ptyDriver) wait() *ExitStatus {
	// An exit status other than 0 is an error to Wait, not here: the
	// ProcessState says how it ended, and is nil only when waiting failed.
	var ps *os.ProcessState
	if d.cmd != nil {
		_ = d.cmd.Wait()
		ps = d.cmd.ProcessState
	} else {
		// Adopted in a handover: still our child, as the process is the
		// same. One that ended while the sessions were frozen may have
		// been reaped by the code before; its status is then lost.
		var err error
		ps, err = d.proc.Wait()
		if errors.Is(err, syscall.ECHILD) {
			awaitNotChild(d.s.Pid, d.s.readDone)
		}
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

func (d *ptyDriver) write(b []byte) error {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	_, err := d.ptmx.Write(b)
	return err
}

// pollable takes the PTY master creack/pty opened as a ptyMaster, whose
// descriptor (read by the pump) is non-blocking: creack/pty hands it over
// in blocking mode, where every call may hold an OS thread, and as an
// *os.File, which Go's poller would serve (ptyMaster says why not).
func pollable(f *os.File) (*ptyMaster, int, error) {
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
	m, err := newPTYMaster(fd)
	if err != nil {
		syscall.Close(fd)
		return nil, 0, err
	}
	return m, fd, nil
}

// canonical reports whether the PTY is still in line mode (ICANON): the
// program on it has not taken its input raw yet. A descriptor that cannot
// tell counts as raw, so nothing waits on it.
func canonical(m *ptyMaster) bool {
	var t *unix.Termios
	err := m.control(func(fd int) (err error) {
		t, err = unix.IoctlGetTermios(fd, termiosGet)
		return err
	})
	return err == nil && t.Lflag&unix.ICANON != 0
}

// setSize sets the PTY's window size. (pty.Setsize takes an *os.File.)
func setSize(m *ptyMaster, cols, rows int) error {
	return m.control(func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	})
}

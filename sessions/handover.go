package sessions

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/sessions/term"
)

// The handover: how a daemon passes its sessions to the binary that takes
// its place (agentd upgrade, docs/upgrade.md). The daemon freezes every
// session at a point where nothing is half done, writes a Snapshot, and
// re-executes itself as the new binary with each PTY's descriptor left
// open. The process, so the agents' parent, stays the same: their pids do
// not change and they never notice. The new code adopts the snapshot.
//
// What moves: each PTY session's descriptor, screen and scrollback (as a
// repaint drawn again on a fresh emulator of the same size), and what its
// decisions remember (state, seen, task, the prompt answered or typed at),
// so the same promptId is on offer and an answer already given is not
// given twice. What does not: the agent's last report (its next hook says
// it again), the output a viewer was sent (viewers reconnect and get a
// repaint), and ACP sessions, whose agents sit mid-conversation on pipes
// whose state only this process knows: a handover is refused while one
// runs.

// SnapshotVersion numbers the snapshot's format. A binary reads the
// versions it knows; the daemon asks before it hands over.
const SnapshotVersion = 1

// Snapshot is what a daemon hands to the binary that takes over.
type Snapshot struct {
	Version  int               `json:"version"`
	Next     int               `json:"next"` // the last session number given out
	Sessions []SessionSnapshot `json:"sessions"`
}

// SessionSnapshot is one session as the handover carries it.
type SessionSnapshot struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Argv      []string  `json:"argv"`
	Cwd       string    `json:"cwd"`
	Pid       int       `json:"pid"`
	Origin    Origin    `json:"origin"`
	Env       []string  `json:"env"`
	Started   time.Time `json:"started"`
	Agent     string    `json:"agent"`     // the manifest in use now
	BaseAgent string    `json:"baseAgent"` // the manifest of the program spawned
	Token     string    `json:"token,omitempty"`

	// FD is the PTY master's descriptor, open across the exec; -1 for a
	// session that has exited (it is carried as a record).
	FD     int    `json:"fd"`
	Cols   int    `json:"cols"`
	Rows   int    `json:"rows"`
	Screen []byte `json:"screen"` // Repaint(true): scrollback, then the screen

	// The session's decision memory (its machine), inline: the fields
	// are the snapshot's own in JSON, as older agentd wrote them.
	MachineMemory
	LastPublished State       `json:"lastPublished"`
	Exited        *ExitStatus `json:"exited,omitempty"`
	ExitedAt      time.Time   `json:"exitedAt"`
	Broken        bool        `json:"broken,omitempty"`
}

// ErrACPRunning refuses a handover while an ACP session runs.
type ErrACPRunning struct{ IDs []string }

func (e *ErrACPRunning) Error() string {
	return fmt.Sprintf("ACP sessions cannot move to new code (their agent is mid-conversation on pipes only this process knows): %s; upgrade once they end", strings.Join(e.IDs, ", "))
}

// Freeze stops every session where nothing is half done — no guarded write
// in flight, no output half applied, no classification running — and
// returns their snapshot and the PTY descriptors it names. Output the
// agents write meanwhile waits in their PTYs for whoever reads next. thaw
// lets the sessions go on; it must be called unless the process is
// replaced.
func (m *Manager) Freeze() (snap *Snapshot, fds []int, thaw func(), err error) {
	m.mu.Lock()
	list := make([]*Session, 0, len(m.order))
	for _, id := range m.order {
		list = append(list, m.sessions[id])
	}
	next := m.next
	m.mu.Unlock()
	// Only terminal sessions are carried: one without a terminal (ACP)
	// that still runs refuses the handover, and an ended one is dropped.
	var acp []string
	var ptys []*ptyDriver
	for _, s := range list {
		if d := ptyOf(s); d != nil {
			ptys = append(ptys, d)
		} else if !s.isExited() {
			acp = append(acp, s.ID)
		}
	}
	if len(acp) > 0 {
		return nil, nil, nil, &ErrACPRunning{IDs: acp}
	}
	// Outermost locks first for every session, then the next: an answer
	// under way (guardMu) needs the pump to see its prompt go, so the pump
	// is stopped (outMu) only once no answer runs. updateMu comes before
	// outMu, as in finish, which lets go of the PTY (outMu) with updateMu
	// held: the other way round, an agent that ended during a freeze
	// would hold one and wait on the other for ever.
	var unlock []func()
	thaw = func() {
		for i := len(unlock) - 1; i >= 0; i-- {
			unlock[i]()
		}
	}
	hold := func(l interface {
		Lock()
		Unlock()
	}) {
		l.Lock()
		unlock = append(unlock, l.Unlock)
	}
	for _, d := range ptys {
		hold(&d.s.guardMu)
		hold(&d.writeMu)
	}
	for _, d := range ptys {
		hold(&d.s.updateMu)
		hold(&d.outMu)
	}
	snap = &Snapshot{Version: SnapshotVersion, Next: next}
	for _, d := range ptys {
		ss := d.snapshotFrozen()
		if ss.FD >= 0 {
			fds = append(fds, ss.FD)
		}
		snap.Sessions = append(snap.Sessions, ss)
	}
	return snap, fds, thaw, nil
}

// snapshotFrozen describes d's session, whose locks Freeze holds.
func (d *ptyDriver) snapshotFrozen() SessionSnapshot {
	s := d.s
	cols, rows := d.term.Size()
	screen := d.term.Repaint(true)
	if title := d.term.Snapshot().Title; title != "" {
		screen = append(screen, "\x1b]2;"+title+"\x07"...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := SessionSnapshot{
		ID: s.ID, Name: s.Name, Argv: s.Argv, Cwd: s.Cwd, Pid: s.Pid, Origin: s.Origin, Env: s.env,
		Started: s.started, Agent: s.manifest.Name, BaseAgent: s.base.Name, Token: s.token,
		FD: -1, Cols: cols, Rows: rows, Screen: screen,
		MachineMemory: s.machine.memory(), LastPublished: s.lastPublished,
		Exited: s.exited, ExitedAt: s.exitedAt, Broken: s.broken,
	}
	if s.exited == nil && d.rd.open {
		ss.FD = d.rd.fd
	}
	return ss
}

// CheckSnapshot says whether this binary can adopt snap: its format, and
// a manifest for every session's agent. It changes nothing; the daemon
// runs it in the new binary before it hands over.
func CheckSnapshot(rules *detect.Set, snap *Snapshot) error {
	if snap.Version < 1 || snap.Version > SnapshotVersion {
		return fmt.Errorf("snapshot format %d: this agentd reads formats 1 to %d", snap.Version, SnapshotVersion)
	}
	for _, ss := range snap.Sessions {
		if ss.ID == "" || ss.Cols < 2 || ss.Rows < 2 || ss.Cols > 1000 || ss.Rows > 1000 {
			return fmt.Errorf("snapshot: session %q has no id or a size of %dx%d", ss.ID, ss.Cols, ss.Rows)
		}
		if ss.Exited == nil && (ss.FD < 0 || ss.Pid <= 0) {
			return fmt.Errorf("snapshot: running session %s has no PTY descriptor or pid", ss.ID)
		}
		for _, name := range []string{ss.Agent, ss.BaseAgent} {
			if _, ok := rules.Lookup(name); !ok {
				return fmt.Errorf("snapshot: session %s runs agent %q, which this agentd has no manifest for", ss.ID, name)
			}
		}
	}
	return nil
}

// SameToCheck says whether CheckSnapshot judges a and b alike: the same
// format and the same sessions, each with the same agents, size and
// liveness. A handover checked as a may then go ahead as b (the screens
// and states it carries moved on, which the check does not judge).
func SameToCheck(a, b *Snapshot) bool {
	if a.Version != b.Version || len(a.Sessions) != len(b.Sessions) {
		return false
	}
	for i, x := range a.Sessions {
		y := b.Sessions[i]
		if x.ID != y.ID || x.Agent != y.Agent || x.BaseAgent != y.BaseAgent || x.Cols != y.Cols || x.Rows != y.Rows ||
			(x.Exited == nil) != (y.Exited == nil) || (x.FD < 0) != (y.FD < 0) || x.Pid != y.Pid {
			return false
		}
	}
	return true
}

// Adopt takes over the sessions of snap, whose PTY descriptors this
// process holds: each is read again, its screen drawn as it was, and its
// agent waited for. It is CheckSnapshot's promise kept; an error leaves
// the sessions adopted so far running and says which could not be.
func (m *Manager) Adopt(snap *Snapshot) error {
	if err := CheckSnapshot(m.opts.Rules, snap); err != nil {
		return err
	}
	m.mu.Lock()
	if snap.Next > m.next {
		m.next = snap.Next
	}
	m.mu.Unlock()
	var errs []error
	for _, ss := range snap.Sessions {
		if err := m.adopt(ss); err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", ss.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) adopt(ss SessionSnapshot) error {
	manifest, _ := m.opts.Rules.Lookup(ss.Agent)
	base, _ := m.opts.Rules.Lookup(ss.BaseAgent)
	s := &Session{
		ID: ss.ID, Name: ss.Name, Argv: ss.Argv, Cwd: ss.Cwd, Pid: ss.Pid, Origin: ss.Origin,
		mgr: m, manifest: manifest, base: base,
		machine:       restoreMachine(ss.MachineMemory, ss.Exited != nil),
		lastPublished: ss.LastPublished,
		exited:        ss.Exited, exitedAt: ss.ExitedAt, broken: ss.Broken,
		token: ss.Token, env: ss.Env, started: ss.Started,
		readDone: make(chan struct{}), exitDone: make(chan struct{}),
	}
	d := newPTYDriver(s, 0)
	s.drv = d
	d.term = term.New(term.Options{Cols: ss.Cols, Rows: ss.Rows, Reply: d.reply})
	d.term.Write(ss.Screen)
	// A prompt's keys are not carried (they are the rules', never a
	// file's): the prompt is read again from the screen drawn again, and
	// only the same prompt, by its ID, takes them (machine.resumed).
	// Otherwise it stays without keys, and an answer is refused until the
	// next look.
	v, _ := d.classifyNow()
	s.machine.resumed(ss.Started, v.Prompt)
	if st := &s.lastPublished; v.Prompt != nil && st.Prompt != nil && ss.Shown == v.Prompt.Content {
		p := *v.Prompt
		p.ID = st.Prompt.ID // the appearance goes on
		st.Prompt = &p
	}
	if ss.Exited != nil {
		close(s.readDone)
		close(s.exitDone)
		m.register(s)
		if left := m.opts.KeepExited - time.Since(ss.ExitedAt); left > 0 {
			time.AfterFunc(left, func() { m.forget(s.ID) })
		} else {
			m.forget(s.ID)
		}
		return nil
	}
	ptmx, err := newPTYMaster(ss.FD)
	if err != nil {
		return fmt.Errorf("PTY descriptor %d: %w", ss.FD, err)
	}
	proc, err := os.FindProcess(ss.Pid)
	if err != nil {
		ptmx.Close()
		return fmt.Errorf("pid %d: %w", ss.Pid, err)
	}
	d.proc = proc
	d.ptmx = ptmx
	if err := m.pump.add(d, ss.FD); err != nil {
		ptmx.Close()
		return err
	}
	m.register(s)
	go d.waitLoop()
	s.poke()
	return nil
}

// register lists s, keeping the sessions in the order of their numbers.
func (m *Manager) register(s *Session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions[s.ID] = s
	m.order = append(m.order, s.ID)
	sort.SliceStable(m.order, func(i, j int) bool { return sessionNumber(m.order[i]) < sessionNumber(m.order[j]) })
}

func sessionNumber(id string) int {
	n := 0
	for _, c := range strings.TrimPrefix(id, "s") {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

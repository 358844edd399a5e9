package sessions

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentd/agentd/detect"
)

// A shell session follows what runs in it: the PTY's foreground process
// group says whether the shell itself waits for a command, a program runs,
// or an agent runs — then the session classifies with that agent's rules
// until the shell is back.

// nativeEndian is the byte order of the machine's own records.
var nativeEndian = binary.NativeEndian

// probeEvery bounds how often the process table is read per session.
const probeEvery = 200 * time.Millisecond

// probeMisses is how many failed reads in a row keep the last answer: a
// process caught mid-exec or mid-exit is not a new foreground.
const probeMisses = 3

// wrappers are programs agents are often started through; their children
// are searched for the agent.
var wrappers = map[string]bool{
	"node": true, "npx": true, "npm": true, "bun": true, "bunx": true, "deno": true,
	"python": true, "python3": true, "uv": true, "uvx": true, "pnpm": true, "yarn": true,
	"env": true, "sh": true, "bash": true, "exec": true,
}

// foreground is one reading of the process table.
type foreground struct {
	shell bool             // the session's own program is in the foreground
	agent *detect.Manifest // the agent running in the foreground, if one is
	job   bool             // some other program runs in the foreground
}

// probeLocked reads the foreground of a shell session, at most every
// probeEvery. Called with s.mu held; returns the current reading.
func (d *ptyDriver) probeLocked() foreground {
	s := d.s
	s.faultPoint("probe")
	if !d.isShell {
		return d.fg
	}
	if wait := probeEvery - time.Since(d.probedAt); wait > 0 {
		s.recheckLocked(wait)
		return d.fg
	}
	d.probedAt = time.Now()
	fg, ok := d.readForeground()
	if !ok {
		d.probeMiss++
		if d.probeMiss < probeMisses {
			return d.fg
		}
		fg = foreground{}
	}
	d.probeMiss = 0
	d.fg = fg
	return fg
}

// recheckLocked classifies once more after wait: a look at the process
// table or the agent's log was skipped as too soon, and the output that
// woke us may be the last for a while.
func (s *Session) recheckLocked(wait time.Duration) {
	if s.recheckQueued {
		return
	}
	s.recheckQueued = true
	time.AfterFunc(wait, func() {
		s.mu.Lock()
		s.recheckQueued = false
		s.mu.Unlock()
		s.poke()
	})
}

func (d *ptyDriver) readForeground() (foreground, bool) {
	s := d.s
	pgid, err := foregroundGroup(d.ptmx)
	if err != nil || pgid <= 0 {
		return foreground{}, false
	}
	if pgid == s.Pid {
		return foreground{shell: true}, true
	}
	comm, argv, ok := readProc(pgid)
	if !ok {
		return foreground{}, false
	}
	rules := s.mgr.Rules()
	if m := identifyAgent(rules, comm, argv); m != nil {
		return foreground{agent: m}, true
	}
	if wrappers[comm] {
		for _, child := range descendants(pgid, 3) {
			if c, a, ok := readProc(child); ok {
				if m := identifyAgent(rules, c, a); m != nil {
					return foreground{agent: m}, true
				}
			}
		}
	}
	return foreground{job: true}, true
}

// identifyAgent names the agent a process is; shells and the generic rules
// do not count as agents.
func identifyAgent(rules *detect.Set, comm string, argv []string) *detect.Manifest {
	m := rules.IdentifyProcess(comm, argv)
	if m == nil || m.Identify.Shell || m.Name == detect.Generic {
		return nil
	}
	return m
}

func foregroundGroup(m *ptyMaster) (pgid int, err error) {
	err = m.control(func(fd int) (err error) {
		pgid, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	return pgid, err
}

// sessionJobs lists the process groups, other than its leader's, of the
// processes in the terminal session sid.
func sessionJobs(sid int) []int {
	if sid <= 1 {
		return nil
	}
	var out []int
	for _, p := range procWalks.since(time.Now()).procs {
		if p.sid == sid && p.pgrp > 1 && p.pgrp != sid && !slices.Contains(out, p.pgrp) {
			out = append(out, p.pgrp)
		}
	}
	return out
}

// descendants lists the processes below pid, breadth first, up to depth.
func descendants(pid, depth int) []int {
	children := map[int][]int{}
	for _, p := range procWalks.since(time.Now()).procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	var out []int
	level := []int{pid}
	for d := 0; d < depth && len(level) > 0; d++ {
		var next []int
		for _, p := range level {
			next = append(next, children[p]...)
		}
		out = append(out, next...)
		level = next
	}
	return out
}

// procEntry is one process as a walk of the process table found it.
type procEntry struct {
	pid, ppid, pgrp, sid int
	// ticks is its user and system time, with that of the children it
	// waited for, in userHZ ticks (Linux; macOS reads it with ps).
	ticks int64
}

// procTable is one walk of the process table, and when it began.
type procTable struct {
	at    time.Time
	procs []procEntry
}

// procWalks shares walks of the process table (readProcTable) among the
// sessions that want one at once. A caller gets a walk that began no
// earlier than it asks (since); callers that ask while a walk is under way
// wait for it, or start the next one together. Why: a walk reads every
// process's stat file (about 8 µs a process here), and the sessions ask at
// the same moments: agentd's stop lists every session's jobs twice (the
// hang-up, the release), which with a walk each was 2,000 walks of the
// table with 1,000 sessions; a busy session reads its CPU time once a
// second.
var procWalks = walker{read: readProcTable}

type walker struct {
	read    func() []procEntry
	mu      sync.Mutex
	last    *procTable    // the latest walk done
	walking chan struct{} // closed when the walk under way ends; nil: none is
}

// since returns a walk that began at t or later.
func (w *walker) since(t time.Time) *procTable {
	w.mu.Lock()
	for {
		if w.last != nil && !w.last.at.Before(t) {
			last := w.last
			w.mu.Unlock()
			return last
		}
		if w.walking == nil {
			break
		}
		// Wait for the walk under way: it may have begun late enough, and
		// if not, whoever comes first starts the next.
		walking := w.walking
		w.mu.Unlock()
		<-walking
		w.mu.Lock()
	}
	walking := make(chan struct{})
	w.walking = walking
	w.mu.Unlock()
	tab := &procTable{at: time.Now()}
	tab.procs = w.read()
	w.mu.Lock()
	w.last, w.walking = tab, nil
	w.mu.Unlock()
	close(walking)
	return tab
}

// parseProcArgs reads a process's argv out of the kern.procargs2 record
// macOS gives (proc_darwin.go): argc as a 32-bit integer in the host's
// order, the executable's path, NUL padding, then argc NUL-ended strings
// (the environment follows). It is here, not in proc_darwin.go, so Linux
// tests it too.
func parseProcArgs(b []byte) (argv []string, ok bool) {
	if len(b) < 4 {
		return nil, false
	}
	argc := int(nativeEndian.Uint32(b))
	rest := b[4:]
	end := bytes.IndexByte(rest, 0) // the executable's path
	if end < 0 {
		return nil, false
	}
	rest = rest[end:]
	for len(rest) > 0 && rest[0] == 0 {
		rest = rest[1:]
	}
	for len(argv) < argc {
		end := bytes.IndexByte(rest, 0)
		if end < 0 {
			return nil, false
		}
		argv = append(argv, string(rest[:end]))
		rest = rest[end+1:]
	}
	return argv, true
}

// parsePsTimes sums the CPU times ps prints one to a line (-o time=):
// [DD-][HH:]MM:SS[.hh], as macOS ("0:01.25") and procps ("00:00:01",
// "1-02:03:04") write them. It is here so that Linux tests it for the Mac.
func parsePsTimes(out string) (time.Duration, bool) {
	var sum time.Duration
	n := 0
	for _, line := range strings.Fields(out) {
		d, ok := parsePsTime(line)
		if !ok {
			return 0, false
		}
		sum += d
		n++
	}
	return sum, n > 0
}

func parsePsTime(s string) (time.Duration, bool) {
	var days time.Duration
	if d, rest, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil {
			return 0, false
		}
		days, s = time.Duration(n)*24*time.Hour, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, false
	}
	sec, err := strconv.ParseFloat(parts[len(parts)-1], 64)
	if err != nil || sec < 0 || sec >= 60 {
		return 0, false
	}
	total := days + time.Duration(sec*float64(time.Second))
	unit := time.Minute
	for i := len(parts) - 2; i >= 0; i-- {
		n, err := strconv.Atoi(parts[i])
		if err != nil || n < 0 {
			return 0, false
		}
		total += time.Duration(n) * unit
		unit *= 60
	}
	return total, true
}

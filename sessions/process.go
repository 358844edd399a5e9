package sessions

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentd/agentd/detect"
)

// A shell session follows what runs in it: the PTY's foreground process
// group says whether the shell itself waits for a command, a program runs,
// or an agent runs — then the session classifies with that agent's rules
// until the shell is back.

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
func (s *Session) probeLocked() foreground {
	if !s.isShell {
		return s.fg
	}
	if wait := probeEvery - time.Since(s.probedAt); wait > 0 {
		s.recheckLocked(wait)
		return s.fg
	}
	s.probedAt = time.Now()
	fg, ok := s.readForeground()
	if !ok {
		s.probeMiss++
		if s.probeMiss < probeMisses {
			return s.fg
		}
		fg = foreground{}
	}
	s.probeMiss = 0
	s.fg = fg
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

func (s *Session) readForeground() (foreground, bool) {
	pgid, err := foregroundGroup(s.ptmx)
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
	if m == nil || m.Name == "shell" || m.Name == detect.Generic {
		return nil
	}
	return m
}

func foregroundGroup(f *os.File) (int, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var pgid int
	var ioErr error
	if err := raw.Control(func(fd uintptr) { pgid, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPGRP) }); err != nil {
		return 0, err
	}
	return pgid, ioErr
}

// readProc returns a process's name and argv from /proc.
func readProc(pid int) (comm string, argv []string, ok bool) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	c, err := os.ReadFile(filepath.Join(dir, "comm"))
	if err != nil {
		return "", nil, false
	}
	cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil {
		return "", nil, false
	}
	for _, a := range strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00") {
		if a != "" {
			argv = append(argv, a)
		}
	}
	return strings.TrimSpace(string(c)), argv, true
}

// descendants lists the processes below pid, breadth first, up to depth.
func descendants(pid, depth int) []int {
	children := map[int][]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The name (field 2) may hold spaces; the parent pid follows it.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		f := strings.Fields(rest)
		if len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				children[ppid] = append(children[ppid], n)
			}
		}
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

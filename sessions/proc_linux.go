package sessions

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

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

// parents maps every process to its parent, from /proc/*/stat.
func parents() map[int]int {
	out := map[int]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
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
				out[n] = ppid
			}
		}
	}
	return out
}

// userHZ is the unit of the times in /proc/*/stat: USER_HZ, which Linux
// fixes at 100 for every program whatever the kernel's own tick.
const userHZ = 100

// sessionCPU is the CPU time the processes of terminal session sid have
// used (user and system time, with that of children they have waited
// for: a tool that ran and ended counts too), when it was read, and
// whether any process is left. Every
// session's is read in one walk of /proc (cpuTable): each look of each
// session walking it cost most of agentd's CPU with 50 sessions (31 % of
// it in the scale bench's profile, 2026-12-07), and a walk costs about
// 8 µs a process on the machine.
func sessionCPU(sid int) (time.Duration, time.Time, bool) {
	cpuTable.Lock()
	defer cpuTable.Unlock()
	if cpuTable.bySession == nil || time.Since(cpuTable.at) >= cpuFresh {
		cpuTable.bySession, cpuTable.at = readSessionTicks(), time.Now()
	}
	ticks, ok := cpuTable.bySession[sid]
	return time.Duration(ticks) * time.Second / userHZ, cpuTable.at, ok
}

// cpuTable is the last walk of /proc: each terminal session's CPU ticks.
var cpuTable struct {
	sync.Mutex
	at        time.Time
	bySession map[int]int64
}

// cpuFresh is how old a walk may be and still answer: a session reads at
// most once a busyLook, so one walk a busyLook serves them all; the busy
// window is measured between the walks' own times (facts.cpuAt), so an
// older walk makes it no less exact.
const cpuFresh = busyLook

// readSessionTicks sums the CPU ticks of every process by its terminal
// session.
func readSessionTicks() map[int]int64 {
	out := map[int]int64{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if sid, ticks, ok := statCPU(string(stat)); ok {
			out[sid] += ticks
		}
	}
	return out
}

// statCPU reads one /proc/PID/stat line: the process's terminal session,
// and its utime+stime+cutime+cstime in ticks.
func statCPU(stat string) (sid int, ticks int64, ok bool) {
	// Fields after the name (which may hold spaces and parentheses):
	// state ppid pgrp session ... utime(14) stime cutime cstime.
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(f) < 15 {
		return 0, 0, false
	}
	sid, err := strconv.Atoi(f[3])
	if err != nil {
		return 0, 0, false
	}
	for _, v := range f[11:15] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		ticks += n
	}
	return sid, ticks, true
}

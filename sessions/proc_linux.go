package sessions

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
// used: user and system time, with that of children they have waited for
// (a tool that ran and ended counts too), from /proc/*/stat.
func sessionCPU(sid int) (time.Duration, bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	var ticks int64
	found := false
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		t, ok := statCPU(string(stat), sid)
		if ok {
			ticks += t
			found = true
		}
	}
	return time.Duration(ticks) * time.Second / userHZ, found
}

// statCPU reads one /proc/PID/stat line: its utime+stime+cutime+cstime in
// ticks, when the process is in terminal session sid.
func statCPU(stat string, sid int) (int64, bool) {
	// Fields after the name (which may hold spaces and parentheses):
	// state ppid pgrp session ... utime(14) stime cutime cstime.
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(f) < 15 {
		return 0, false
	}
	if s, err := strconv.Atoi(f[3]); err != nil || s != sid {
		return 0, false
	}
	var sum int64
	for _, v := range f[11:15] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false
		}
		sum += n
	}
	return sum, true
}

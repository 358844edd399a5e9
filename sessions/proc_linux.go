package sessions

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
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

// userHZ is the unit of the times in /proc/*/stat: USER_HZ, which Linux
// fixes at 100 for every program whatever the kernel's own tick.
const userHZ = 100

// sessionCPU is the CPU time the processes of terminal session sid have
// used (user and system time, with that of children they have waited
// for: a tool that ran and ended counts too), when it was read, and
// whether any process is left. A walk of /proc up to cpuFresh old answers
// (procWalks): each look of each session walking it cost most of agentd's
// CPU with 50 sessions (31 % of it in the scale bench's profile,
// 2026-12-07).
func sessionCPU(sid int) (time.Duration, time.Time, bool) {
	tab := procWalks.since(time.Now().Add(-cpuFresh))
	var ticks int64
	found := false
	for _, p := range tab.procs {
		if p.sid == sid {
			ticks += p.ticks
			found = true
		}
	}
	return time.Duration(ticks) * time.Second / userHZ, tab.at, found
}

// cpuFresh is how old a walk may be and still answer: a session reads at
// most once a busyLook, so one walk a busyLook serves them all; the busy
// window is measured between the walks' own times (facts.cpuAt), so an
// older walk makes it no less exact.
const cpuFresh = busyLook

// readProcTable walks /proc: every process's stat file. Each is opened
// relative to /proc and read in one call into one buffer, not with
// os.ReadFile (six system calls, a path walked from the root, a buffer
// each): about 10 µs a process against 25 to 30 (BenchmarkProcTable).
func readProcTable() []procEntry {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil
	}
	raw, err := dir.SyscallConn()
	if err != nil {
		return nil
	}
	out := make([]procEntry, 0, len(names))
	var buf [1024]byte // a stat line is about 300 bytes; the name in it at most 64
	_ = raw.Control(func(dirfd uintptr) {
		for _, name := range names {
			pid, err := strconv.Atoi(name)
			if err != nil {
				continue
			}
			fd, err := unix.Openat(int(dirfd), name+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				continue // it ended since the directory was read
			}
			n, err := unix.Read(fd, buf[:])
			unix.Close(fd)
			if err != nil || n <= 0 {
				continue
			}
			if p, ok := parseStat(string(buf[:n])); ok {
				p.pid = pid
				out = append(out, p)
			}
		}
	})
	return out
}

// parseStat reads one /proc/PID/stat line: the process's parent, group,
// terminal session, and utime+stime+cutime+cstime in ticks.
func parseStat(stat string) (p procEntry, ok bool) {
	// Fields after the name (which may hold spaces and parentheses):
	// state ppid pgrp session ... utime(14) stime cutime cstime.
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(f) < 15 {
		return p, false
	}
	var err error
	for i, v := range []*int{&p.ppid, &p.pgrp, &p.sid} {
		if *v, err = strconv.Atoi(f[1+i]); err != nil {
			return p, false
		}
	}
	for _, v := range f[11:15] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return p, false
		}
		p.ticks += n
	}
	return p, true
}

package sessions

import (
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// readProc returns a process's name and argv from sysctl: kern.proc.pid
// for the name (p_comm, at most 16 bytes, as Linux's comm is), and
// kern.procargs2 for argv. Only a Mac runs this; its parsing is
// parseProcArgs, which Linux tests.
func readProc(pid int) (comm string, argv []string, ok bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return "", nil, false
	}
	raw, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return "", nil, false
	}
	if argv, ok = parseProcArgs(raw); !ok {
		return "", nil, false
	}
	return unix.ByteSliceToString(kp.Proc.P_comm[:]), argv, true
}

// readProcTable walks kern.proc.all. The terminal session is not in it
// (only a kernel address of one), so each process's is asked for.
func readProcTable() []procEntry {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	out := make([]procEntry, 0, len(procs))
	for _, kp := range procs {
		p := procEntry{pid: int(kp.Proc.P_pid), ppid: int(kp.Eproc.Ppid), pgrp: int(kp.Eproc.Pgid)}
		if p.sid, err = unix.Getsid(p.pid); err != nil {
			continue // it ended since
		}
		out = append(out, p)
	}
	return out
}

// sessionCPU is the CPU time the processes of terminal session sid have
// used. macOS keeps it behind proc_pidinfo, which Go reaches only through
// cgo, so ps reads it (user + system time); parsePsTimes, which Linux
// tests, reads what ps prints. It runs only while a session's screen
// disagrees with a busy agent, at most once a second.
func sessionCPU(sid int) (time.Duration, time.Time, bool) {
	at := time.Now()
	var pids []string
	for _, p := range procWalks.since(at).procs {
		if p.sid == sid {
			pids = append(pids, strconv.Itoa(p.pid))
		}
	}
	if len(pids) == 0 {
		return 0, at, false
	}
	out, err := exec.Command("ps", "-o", "time=", "-p", strings.Join(pids, ",")).Output()
	if err != nil && len(out) == 0 {
		return 0, at, false
	}
	cpu, ok := parsePsTimes(string(out))
	return cpu, at, ok
}

package sessions

import (
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

// parents maps every process to its parent, from kern.proc.all.
func parents() map[int]int {
	out := map[int]int{}
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return out
	}
	for _, kp := range procs {
		out[int(kp.Proc.P_pid)] = int(kp.Eproc.Ppid)
	}
	return out
}

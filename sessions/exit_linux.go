package sessions

import (
	"os"

	"golang.org/x/sys/unix"
)

// awaitExit returns once process pid, a child of ours, has ended, without
// reaping it, so that exec.Cmd.Wait then returns at once. On Linux it
// parks on the child's pidfd in Go's poller, so a waiting session holds no
// OS thread (exec.Cmd.Wait alone holds one in waitid for the child's whole
// life: 50 sessions, 50 threads). Where there is no pidfd (a kernel before
// 5.10, or AGENTD_PORTABLE=1) it returns at once, and Wait blocks as it
// does on macOS.
func awaitExit(pid int) {
	if Portable() {
		return
	}
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		// Done once it has ended (Signo is SIGCHLD), or if waitid cannot
		// tell: then Wait decides.
		return err != unix.EINTR && (err != nil || info.Signo != 0)
	})
}

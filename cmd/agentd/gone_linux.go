package main

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// pidfdGone waits for pid's end on its pidfd (Linux 5.3+). ok is false
// where there is no pidfd to wait on.
func pidfdGone(pid int, d time.Duration) (gone, ok bool) {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true, true // already gone
	}
	if err != nil {
		return false, false
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for deadline := time.Now().Add(d); ; {
		left := time.Until(deadline)
		if left <= 0 {
			return false, true
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0, true
	}
}

package sessions

import (
	"time"

	"golang.org/x/sys/unix"
)

// The few facts of this OS that the portable code needs.
const (
	// termiosGet is the ioctl that reads a terminal's settings.
	termiosGet = unix.TCGETS
	// sunPathSize is the size of a unix socket address's path, its
	// closing NUL included.
	sunPathSize = 108
)

// waitWritable waits up to d for fd to take a write; with AGENTD_PORTABLE=1,
// as macOS does (select), so that Linux runs that path too.
func waitWritable(fd int, d time.Duration) error {
	if Portable() {
		return selectWritable(fd, d)
	}
	_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}, int(d.Milliseconds()))
	return err
}

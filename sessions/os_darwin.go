package sessions

import (
	"time"

	"golang.org/x/sys/unix"
)

// The few facts of this OS that the portable code needs.
const (
	// termiosGet is the ioctl that reads a terminal's settings.
	termiosGet = unix.TIOCGETA
	// sunPathSize is the size of a unix socket address's path, its
	// closing NUL included.
	sunPathSize = 104
)

// waitWritable waits up to d for fd to take a write: select, as poll(2)
// on macOS does not take devices.
func waitWritable(fd int, d time.Duration) error { return selectWritable(fd, d) }

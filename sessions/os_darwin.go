package sessions

import "golang.org/x/sys/unix"

// The few facts of this OS that the portable code needs.
const (
	// termiosGet is the ioctl that reads a terminal's settings.
	termiosGet = unix.TIOCGETA
	// sunPathSize is the size of a unix socket address's path, its
	// closing NUL included.
	sunPathSize = 104
)

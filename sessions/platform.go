package sessions

import (
	"fmt"
	"os"
)

// EnvPortable, set to 1, makes agentd on Linux take the paths it takes on
// macOS wherever the two can differ and the macOS form also runs on Linux:
// select(2) for PTY readiness instead of epoll, a blocking wait for each
// child instead of a pidfd, and no /run/user for the socket's folder. CI
// runs the daemon's tests once more with it set, so what a Mac runs is
// exercised on every commit (docs/platforms.md lists what it covers and
// what only a Mac can run).
const EnvPortable = "AGENTD_PORTABLE"

// Portable reports whether the portable paths are forced.
func Portable() bool { return os.Getenv(EnvPortable) == "1" }

// portableSunPathSize is macOS's sun_path, the smaller of the two: with
// AGENTD_PORTABLE=1 Linux refuses what a Mac would.
const portableSunPathSize = 104

// CheckSocketPath refuses a unix socket path too long for this OS's socket
// addresses, with a message that names the path and the limit, where the
// system would say only "invalid argument". On macOS the per-user $TMPDIR
// (/var/folders/…/T/) leaves room for agentd's names, but a deep
// XDG_RUNTIME_DIR or AGENTD_SOCKET may not.
func CheckSocketPath(path string) error {
	size := sunPathSize
	if Portable() {
		size = min(size, portableSunPathSize)
	}
	if len(path) >= size {
		return fmt.Errorf("the socket path %s is %d bytes, and this system takes at most %d: set %s or XDG_RUNTIME_DIR to a shorter folder", path, len(path), size-1, "AGENTD_SOCKET")
	}
	return nil
}

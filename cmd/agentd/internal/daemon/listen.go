//go:build unix

package daemon

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"

	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/sessions"
)

// Listen makes the daemon's socket at path, in a private folder, mode
// 0600. The caller holds the daemon's lock, so a socket file already there
// is a dead daemon's and is replaced.
func Listen(path string) (*net.UnixListener, error) {
	if err := sessions.CheckSocketPath(path); err != nil {
		return nil, err
	}
	if err := daemonlink.PrivateDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSocket == 0 {
		return nil, fmt.Errorf("%s is there and is not a socket: refusing to replace it", path)
	}
	_ = os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	// The 0700 folder keeps others out in the moment before the chmod.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

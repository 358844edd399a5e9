package rpc

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agentd/agentd/sessions"
)

// The daemon's socket is private to its user: it lives in a folder only
// that user can open (0700, owned by them), the socket itself is 0600, and
// every connection's peer uid is checked (SO_PEERCRED, LOCAL_PEERCRED) in case a mode was
// loosened by hand.

// EnvSocket names the daemon's socket for every agentd command; agentd sets
// it in each session's environment, so an agentd command run by an agent
// reaches the daemon that hosts it.
const EnvSocket = "AGENTD_SOCKET"

// SocketPath is where the per-user daemon listens: $AGENTD_SOCKET when set,
// else agentd.sock in RuntimeDir.
func SocketPath() string {
	if p := os.Getenv(EnvSocket); p != "" {
		return p
	}
	return filepath.Join(RuntimeDir(), "agentd.sock")
}

// RuntimeDir is agentd's folder for sockets: $XDG_RUNTIME_DIR/agentd; where
// that is unset (a non-interactive `ssh host agentd …`, or macOS, which has
// none), the user's run folder where the OS has one (/run/user/<uid> on
// Linux) and otherwise agentd-<uid> in the temp folder. On macOS that is
// under $TMPDIR, which is already per user (/var/folders/…/T/); PrivateDir
// checks its mode and owner all the same.
func RuntimeDir() string {
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		return filepath.Join(dir, "agentd")
	}
	uid := os.Getuid()
	if run := userRunDir(uid); run != "" && !sessions.Portable() && ownedDir(run, uid) {
		return filepath.Join(run, "agentd")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("agentd-%d", uid))
}

func ownedDir(path string, uid int) bool {
	st, err := os.Lstat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == uid
}

// PrivateDir makes dir if it is missing (0700) and checks that it is a
// folder of this user's that nobody else can open. A folder owned by
// someone else, a symlink, or one with group or other bits is refused with
// an error naming it: agentd never loosens or takes over such a folder.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("agentd's folder %s: %w", dir, err)
	}
	return CheckPrivateDir(dir)
}

// CheckPrivateDir is PrivateDir's check alone: a missing folder passes.
func CheckPrivateDir(dir string) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("agentd's folder %s: %w", dir, err)
	}
	if st.Mode()&fs.ModeSymlink != 0 || !st.IsDir() {
		return fmt.Errorf("agentd's folder %s is not a folder (a symlink or a file): refusing it; remove it and start again", dir)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("agentd's folder %s: cannot read its owner", dir)
	}
	if int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("agentd's folder %s belongs to uid %d, not to you (uid %d): refusing it; remove it, or set XDG_RUNTIME_DIR or %s elsewhere", dir, sys.Uid, os.Getuid(), EnvSocket)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("agentd's folder %s has mode %04o: others could reach the sockets in it; refusing it (chmod 700 %s, then start again)", dir, perm, dir)
	}
	return nil
}

// Listen makes the daemon's socket at path, in a private folder, mode
// 0600. The caller holds the daemon's lock, so a socket file already there
// is a dead daemon's and is replaced.
func Listen(path string) (*net.UnixListener, error) {
	if err := sessions.CheckSocketPath(path); err != nil {
		return nil, err
	}
	if err := PrivateDir(filepath.Dir(path)); err != nil {
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

// Peer is who is at the other end of a unix socket.
type Peer struct{ Uid, Pid int }

// PeerOf reads the peer's credentials of a unix connection (peerCred: per
// OS).
func PeerOf(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var p Peer
	var credErr error
	if err := raw.Control(func(fd uintptr) { p, credErr = peerCred(int(fd)) }); err != nil {
		return Peer{}, err
	}
	return p, credErr
}

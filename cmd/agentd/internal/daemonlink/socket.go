//go:build unix

package daemonlink

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The daemon's socket is private to its user: it lives in a folder only
// that user can open (0700, owned by them), the socket itself is 0600, and
// the daemon checks every connection's peer uid (rpc.PeerOf) in case a
// mode was loosened by hand.

// EnvSocket names the daemon's socket for every agentd command; agentd sets
// it in each session's environment, so an agentd command run by an agent
// reaches the daemon that hosts it.
const EnvSocket = "AGENTD_SOCKET"

// envPortable is sessions.EnvPortable (a test holds them equal): with it
// set, Linux takes macOS's socket folder. Its name is repeated here so
// that what reaches a daemon need not import the sessions.
const envPortable = "AGENTD_PORTABLE"

// SocketPath is the daemon's socket: flagValue (a --socket flag), else
// $AGENTD_SOCKET, else agentd.sock in RuntimeDir; always absolute.
func SocketPath(flagValue string) (string, error) {
	p := flagValue
	if p == "" {
		p = os.Getenv(EnvSocket)
	}
	if p == "" {
		p = filepath.Join(RuntimeDir(), "agentd.sock")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("socket %q: %w", p, err)
	}
	return abs, nil
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
	if run := userRunDir(uid); run != "" && os.Getenv(envPortable) != "1" && ownedDir(run, uid) {
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

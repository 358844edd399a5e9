//go:build unix

package daemonlink

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/agentd/agentd/sessions"
)

// The socket folder's portable switch is the sessions' own, named twice
// only so that clients need not import the sessions.
func TestEnvPortableIsTheSessions(t *testing.T) {
	if envPortable != sessions.EnvPortable {
		t.Errorf("daemonlink reads %s, the sessions %s", envPortable, sessions.EnvPortable)
	}
}

func mustSocketPath(t *testing.T) string {
	t.Helper()
	p, err := SocketPath("")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Where the daemon's socket is: AGENTD_SOCKET, else the runtime folder; a
// non-interactive ssh login without XDG_RUNTIME_DIR finds the same daemon
// under /run/user/<uid> when that folder is there, else in the temp folder.
func TestSocketPath(t *testing.T) {
	t.Setenv(EnvSocket, "")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/4242")
	if got := mustSocketPath(t); got != "/run/user/4242/agentd/agentd.sock" {
		t.Errorf("with XDG_RUNTIME_DIR: %s", got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	run := filepath.Join("/run/user", strconv.Itoa(os.Getuid()))
	want := filepath.Join(os.TempDir(), "agentd-"+strconv.Itoa(os.Getuid()), "agentd.sock")
	if ownedDir(run, os.Getuid()) && os.Getenv(envPortable) != "1" {
		want = filepath.Join(run, "agentd", "agentd.sock")
	}
	if got := mustSocketPath(t); got != want {
		t.Errorf("without XDG_RUNTIME_DIR: %s, want %s", got, want)
	}
	t.Setenv(EnvSocket, "/somewhere/else.sock")
	if got := mustSocketPath(t); got != "/somewhere/else.sock" {
		t.Errorf("with AGENTD_SOCKET: %s", got)
	}
}

// PrivateDir makes a missing folder 0700 and accepts it; it refuses loose
// modes and symlinks by name without changing them.
func TestPrivateDir(t *testing.T) {
	root := t.TempDir()
	fresh := filepath.Join(root, "a", "agentd")
	if err := PrivateDir(fresh); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o700 {
		t.Errorf("made with mode %04o, want 0700", st.Mode().Perm())
	}
	loose := filepath.Join(root, "loose")
	_ = os.Mkdir(loose, 0o755)
	_ = os.Chmod(loose, 0o755)
	if err := PrivateDir(loose); err == nil {
		t.Errorf("a 0755 folder was accepted")
	} else if st, _ := os.Stat(loose); st.Mode().Perm() != 0o755 {
		t.Errorf("the refused folder's mode was changed to %04o", st.Mode().Perm())
	}
	link := filepath.Join(root, "link")
	_ = os.Symlink(fresh, link)
	if err := PrivateDir(link); err == nil {
		t.Errorf("a symlink was accepted")
	}
}

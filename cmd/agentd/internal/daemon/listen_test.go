//go:build unix

package daemon

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/sessions"
)

// Without XDG_RUNTIME_DIR or a run folder, as on macOS (and on Linux with
// AGENTD_PORTABLE=1), the socket lives in agentd-<uid> under $TMPDIR: a
// 0700 folder of the user's, a 0600 socket; a folder of another user's is
// refused by name, and so is a path too long for a socket address.
func TestTempDirSocketFolder(t *testing.T) {
	t.Setenv(sessions.EnvPortable, "1")
	t.Setenv(daemonlink.EnvSocket, "")
	t.Setenv("XDG_RUNTIME_DIR", "")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	path, err := daemonlink.SocketPath("")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "agentd-"+strconv.Itoa(os.Getuid()))
	if path != filepath.Join(dir, "agentd.sock") {
		t.Fatalf("socket at %s, want it in %s", path, dir)
	}
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s has mode %04o, want %04o", p, st.Mode().Perm(), want)
		}
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if peer, err := rpc.PeerOf(c); err != nil || peer.Uid != os.Getuid() || peer.Pid != os.Getpid() {
		t.Errorf("peer of our own connection: %+v, %v; want uid %d pid %d", peer, err, os.Getuid(), os.Getpid())
	}

	// Another user's folder in its place is refused.
	t.Run("another user's folder", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("giving a folder to another user takes root (CI runs as root)")
		}
		theirs := filepath.Join(tmp, "theirs")
		if err := os.Mkdir(theirs, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		_, err := Listen(filepath.Join(theirs, "agentd.sock"))
		if err == nil || !strings.Contains(err.Error(), theirs) || !strings.Contains(err.Error(), "uid 65534") {
			t.Errorf("a folder of uid 65534: %v, want a refusal naming it and its owner", err)
		}
	})

	// A path past macOS's 104-byte socket address is refused by name.
	deep := filepath.Join(tmp, strings.Repeat("d", 120), "agentd.sock")
	_, err = Listen(deep)
	if err == nil || !strings.Contains(err.Error(), deep) || !strings.Contains(err.Error(), "at most 103") {
		t.Errorf("a %d-byte socket path: %v, want a refusal naming it and the limit", len(deep), err)
	}
	if _, err := os.Stat(filepath.Dir(deep)); err == nil {
		t.Errorf("the refused path's folder was made")
	}
}

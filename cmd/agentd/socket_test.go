package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// otherUID is the uid the tests connect as to play another user: nobody.
const otherUID = 65534

// The daemon's socket is the user's alone: its folder is 0700 and the
// socket 0600, so another user cannot even reach it; and where the modes
// were opened up by hand, the daemon still refuses the other user by the
// peer's credentials (SO_PEERCRED), tells them why and logs it.
func TestDaemonSocketIsPrivate(t *testing.T) {
	d := newDaemonEnv(t)
	c := d.forwarder()
	for path, want := range map[string]os.FileMode{d.dir: 0o700, d.socket: 0o600, d.socket + ".lock": 0o600} {
		st, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s has mode %04o, want %04o", path, st.Mode().Perm(), want)
		}
	}
	if os.Getuid() != 0 {
		t.Skip("connecting as another user needs root (setpriv); CI runs as root")
	}
	// A copy of agentd that the other user may run.
	shared := t.TempDir()
	must(t, os.Chmod(shared, 0o755))
	bin := filepath.Join(shared, "agentd")
	copyFile(t, agentdBinary(t), bin, 0o755)
	asOther := func(args ...string) (string, int) {
		cmd := exec.Command("setpriv", append([]string{"--reuid=" + strconv.Itoa(otherUID), "--regid=" + strconv.Itoa(otherUID), "--clear-groups", bin}, args...)...)
		cmd.Env = append(d.env, "HOME=/nonexistent")
		out, err := cmd.CombinedOutput()
		if err != nil && cmd.ProcessState == nil {
			t.Fatalf("setpriv: %v", err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}

	out, code := asOther("ls")
	if code == 0 || !strings.Contains(out, "permission denied") {
		t.Errorf("another user's agentd ls with the folder 0700: exit %d, %q; want permission denied", code, out)
	}
	t.Logf("uid %d, folder 0700: exit %d: %s", otherUID, code, strings.TrimSpace(out))

	// Open the way by hand, as a careless person might.
	for p := d.dir; p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
		_ = os.Chmod(p, 0o777)
	}
	must(t, os.Chmod(d.socket, 0o666))
	out, code = asOther("ls")
	if code == 0 || !strings.Contains(out, "serves uid 0 only") {
		t.Errorf("another user's agentd ls through an opened socket: exit %d, %q; want refused", code, out)
	}
	t.Logf("uid %d, folder and socket opened by hand: exit %d: %s", otherUID, code, strings.TrimSpace(out))
	log, _ := os.ReadFile(d.log)
	if !strings.Contains(string(log), "refused a connection from another user") || !strings.Contains(string(log), "uid="+strconv.Itoa(otherUID)) {
		t.Errorf("the refusal is not in the daemon's log:\n%s", log)
	}
	// The user's own clients are still served.
	if l := c.list(); l.Sessions == nil {
		t.Errorf("session/list after the refusal: %+v", l)
	}
}

// A folder for the socket that is not safely the user's own is refused,
// by name, and never loosened or taken over.
func TestDaemonRefusesUnsafeFolders(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"loose mode", func(t *testing.T, dir string) { must(t, os.Mkdir(dir, 0o755)); must(t, os.Chmod(dir, 0o755)) }, "has mode 0755"},
		{"a symlink", func(t *testing.T, dir string) {
			target := dir + "-real"
			must(t, os.Mkdir(target, 0o700))
			must(t, os.Symlink(target, dir))
		}, "is not a folder"},
		{"another user's", func(t *testing.T, dir string) {
			if os.Getuid() != 0 {
				t.Skip("chown to another user needs root; CI runs as root")
			}
			must(t, os.Mkdir(dir, 0o700))
			must(t, os.Chown(dir, otherUID, otherUID))
		}, "belongs to uid 65534"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			tc.setup(t, dir)
			socket := filepath.Join(dir, "agentd.sock")
			env := append(withoutAgentdEnv(os.Environ()), "AGENTD_SOCKET="+socket, "XDG_STATE_HOME="+t.TempDir())
			cmd := exec.Command(agentdBinary(t), "serve")
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), dir) || !strings.Contains(string(out), tc.want) {
				t.Errorf("agentd serve in %s: %v, %q; want refused with %q", tc.name, err, out, tc.want)
			}
			// The editor's sidecar says the same in answer to initialize.
			resp := forwardOnce(t, env, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
			if resp.Error == nil || resp.Error.Code != -32043 || !strings.Contains(resp.Error.Message, tc.want) {
				t.Errorf("initialize through the forwarder: %+v, want -32043 with the reason", resp.Error)
			}
			// So does an editor's autoconnect (--no-start), which must not
			// take the refusal for "no daemon runs" (-32042) and say nothing.
			resp = forwardOnce(t, env, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "--no-start")
			if resp.Error == nil || resp.Error.Code != -32043 || !strings.Contains(resp.Error.Message, tc.want) {
				t.Errorf("initialize through a --no-start forwarder: %+v, want -32043 with the reason", resp.Error)
			}
			if _, err := os.Stat(socket); err == nil {
				t.Errorf("a socket was made in the refused folder")
			}
			st, _ := os.Lstat(dir)
			if tc.name == "loose mode" && st.Mode().Perm() != 0o755 {
				t.Errorf("the folder's mode was changed to %04o", st.Mode().Perm())
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	must(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	must(t, err)
	_, err = io.Copy(out, in)
	must(t, err)
	must(t, out.Close())
}

var _ = time.Second

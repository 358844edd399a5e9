//go:build linux

package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// socketInodes are the socket inodes process pid holds open.
func socketInodes(t *testing.T, pid int) map[string]bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			out[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	return out
}

// netSockets reads /proc/net/<proto>: each socket's inode and its local
// address (for unix sockets, the path), and whether it listens.
func netSockets(t *testing.T, proto string) map[string]string {
	t.Helper()
	f, err := os.Open("/proc/net/" + proto)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		switch {
		case proto == "unix" && len(fs) >= 7:
			path := ""
			if len(fs) >= 8 {
				path = fs[7]
			}
			out[fs[6]] = path
		case proto != "unix" && len(fs) >= 10:
			out[fs[9]] = fs[1] + " state " + fs[3]
		}
	}
	return out
}

// TestWebCostsTheDaemonNothingWhenOff: the page server is a process of
// its own; a daemon serving sessions holds no TCP or UDP socket at all,
// and listens only on its unix socket and its report socket — and stays
// so while agentd web runs beside it, which holds the only TCP listener.
func TestWebCostsTheDaemonNothingWhenOff(t *testing.T) {
	d := newDaemonEnv(t)
	bin := agentdBinary(t)
	if out, errOut, code := d.cli("run", "--name", "demo", "--", bin, "demo-agent"); code != 0 {
		t.Fatalf("agentd run: %d %s %s", code, out, errOut)
	}
	pid := d.pid()
	if pid == 0 {
		t.Fatal("no daemon runs after agentd run")
	}
	check := func(when string) {
		t.Helper()
		mine := socketInodes(t, pid)
		for _, proto := range []string{"tcp", "tcp6", "udp", "udp6"} {
			for inode, what := range netSockets(t, proto) {
				if mine[inode] {
					t.Errorf("%s: the daemon holds a %s socket: %s", when, proto, what)
				}
			}
		}
		var paths []string
		for inode, path := range netSockets(t, "unix") {
			if mine[inode] && path != "" {
				paths = append(paths, path)
			}
		}
		want := map[string]bool{d.socket: true, filepath.Join(d.dir, "agentd-"+strconv.Itoa(pid)+".sock"): true}
		for _, p := range paths {
			if !want[p] {
				t.Errorf("%s: the daemon has a unix socket at %s; want only %v", when, p, want)
			}
		}
		if len(paths) == 0 {
			t.Errorf("%s: found none of the daemon's unix sockets in /proc/net/unix (mine %v)", when, mine)
		}
	}
	check("web off")
	token := filepath.Join(t.TempDir(), "web-token")
	_, web, _ := startWeb(t, d, token, "--listen", "127.0.0.1:0")
	check("web on")
	var listens bool
	webSockets := socketInodes(t, web.Process.Pid)
	for inode, what := range netSockets(t, "tcp") {
		if webSockets[inode] && strings.HasSuffix(what, "state 0A") {
			listens = true
		}
	}
	if !listens {
		t.Error("agentd web holds no listening TCP socket: the check above would not see one either")
	}
}

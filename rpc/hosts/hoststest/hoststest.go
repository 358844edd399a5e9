//go:build unix

// Package hoststest gives tests other machines to reach over ssh: a real
// OpenSSH server on loopback per host, each with its own world (HOME,
// socket, state and config folders, set for every login by SetEnv), so
// that each runs an agentd daemon of its own. The test's key and each
// server's host key are made here, and the client checks the host key
// against a known_hosts file, as a person's ssh would. Used by
// cmd/agentd's TestHostsOverSSH and `agentd web --hosts` tests, and by
// editors/web's browser test of several hosts.
package hoststest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Keys is the user key every test host takes.
type Keys struct{ Dir, Key string }

// NewKeys makes the user key, skipping the test where no OpenSSH server is
// installed (failing it under AGENTD_REQUIRE_AGENTS, as CI runs).
func NewKeys(t testing.TB) Keys {
	t.Helper()
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		if os.Getenv("AGENTD_REQUIRE_AGENTS") != "" {
			t.Fatal("the OpenSSH server is not installed (.ci/run installs openssh-server)")
		}
		t.Skip("the OpenSSH server (/usr/sbin/sshd) is not installed")
	}
	dir := t.TempDir()
	k := Keys{Dir: dir, Key: filepath.Join(dir, "id")}
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", k.Key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	if os.Geteuid() == 0 {
		_ = os.MkdirAll("/run/sshd", 0o755) // sshd's privilege separation folder
	}
	return k
}

// Host is another machine as agentd reaches it.
type Host struct {
	t      testing.TB
	Name   string
	Dir    string
	Port   int
	Socket string // its daemon's socket
	agentd string
	config string
	cmd    *exec.Cmd
	// Entry is its [[hosts]] entry for config.toml.
	Entry string
}

// Start starts a host named name whose logins run agentd as the binary
// at agentd; it is taken down, and its daemon stopped, when the test ends.
func Start(t testing.TB, keys Keys, name, agentd string) *Host {
	t.Helper()
	dir := t.TempDir()
	h := &Host{t: t, Name: name, Dir: dir, agentd: agentd}
	for _, sub := range []string{"home", "run", "state", "config"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	h.Socket = filepath.Join(dir, "run", "agentd.sock")
	hostKey := filepath.Join(dir, "host_key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(keys.Key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	authorized := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authorized, pub, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.Port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	// HOME of its own too: the login shell reads no rc file of the
	// person running the tests.
	h.config = filepath.Join(dir, "sshd_config")
	conf := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
AuthorizedKeysFile %s
PidFile %s
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
SetEnv HOME=%s AGENTD_SOCKET=%s XDG_STATE_HOME=%s XDG_CONFIG_HOME=%s DBUS_SESSION_BUS_ADDRESS=disabled:
LogLevel ERROR
`, h.Port, hostKey, authorized, filepath.Join(dir, "sshd.pid"),
		filepath.Join(dir, "home"), h.Socket, filepath.Join(dir, "state"), filepath.Join(dir, "config"))
	if err := os.WriteFile(h.config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	hostPub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(hostPub))
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, fmt.Appendf(nil, "[127.0.0.1]:%d %s %s\n", h.Port, f[0], f[1]), 0o600); err != nil {
		t.Fatal(err)
	}
	h.Entry = fmt.Sprintf(`[[hosts]]
name = %q
ssh = "127.0.0.1"
ssh_options = ["-F", "/dev/null", "-p", "%d", "-i", %q, "-o", "IdentitiesOnly=yes", "-o", "UserKnownHostsFile=%s", "-o", "StrictHostKeyChecking=yes"]
agentd = %q
`, name, h.Port, keys.Key, known, agentd)
	h.Up()
	t.Cleanup(func() {
		h.Down()
		h.StopDaemon()
	})
	return h
}

// WriteConfig writes a config.toml naming hosts under configHome/agentd
// (XDG_CONFIG_HOME for the agentd that reaches them).
func WriteConfig(t testing.TB, configHome string, hosts ...*Host) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(configHome, "agentd"), 0o700); err != nil {
		t.Fatal(err)
	}
	var entries []string
	for _, h := range hosts {
		entries = append(entries, h.Entry)
	}
	if err := os.WriteFile(filepath.Join(configHome, "agentd", "config.toml"), []byte(strings.Join(entries, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Up starts the host's ssh server and waits until it takes connections.
func (h *Host) Up() {
	h.t.Helper()
	h.cmd = exec.Command("/usr/sbin/sshd", "-D", "-e", "-f", h.config)
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log, err := os.OpenFile(filepath.Join(h.Dir, "sshd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		h.t.Fatal(err)
	}
	defer log.Close()
	h.cmd.Stdout, h.cmd.Stderr = log, log
	if err := h.cmd.Start(); err != nil {
		h.t.Fatalf("sshd: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", h.Port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(h.Dir, "sshd.log"))
			h.t.Fatalf("host %s: sshd takes no connection on port %d after 30 s (%v); its log:\n%s", h.Name, h.Port, err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Down takes the host off the network: its ssh server and every
// connection it serves end. Its daemon and sessions run on.
//
// sshd puts each connection in a session of its own (setsid), so killing
// the server's process group leaves a long-lived connection (agentd web's)
// up: the connections' processes are found as the server's descendants
// (in /proc, where there is one), leaving out the daemon and what it runs.
func (h *Host) Down() {
	if h.cmd == nil {
		return
	}
	conns := descendants(h.cmd.Process.Pid, h.daemonPid())
	_ = syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	for _, pid := range conns {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = h.cmd.Wait()
	h.cmd = nil
}

// daemonPid is the host's daemon's pid, from its lock file; 0 when none runs.
func (h *Host) daemonPid() int {
	b, err := os.ReadFile(h.Socket + ".lock")
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// descendants are root's descendants as /proc lists them, leaving out
// skip and its own.
func descendants(root, skip int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			if c == skip {
				continue
			}
			out = append(out, c)
			walk(c)
		}
	}
	walk(root)
	return out
}

// Env is an environment for an agentd command run straight on the host
// (not over ssh): the caller's, without its AGENTD_ variables, with the
// host's socket.
func (h *Host) Env() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "AGENTD_") && !strings.HasPrefix(kv, "AGENTD_PORTABLE=") || strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "DBUS_SESSION_BUS_ADDRESS=disabled:", "AGENTD_SOCKET="+h.Socket,
		"XDG_STATE_HOME="+filepath.Join(h.Dir, "state"), "XDG_CONFIG_HOME="+filepath.Join(h.Dir, "config"))
}

// StopDaemon ends the host's daemon and its sessions.
func (h *Host) StopDaemon() {
	cmd := exec.Command(h.agentd, "stop", "--force")
	cmd.Env = h.Env()
	_ = cmd.Run()
}

//go:build unix

package daemonlink

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/rpc/client"
	"github.com/agentd/agentd/rpc/protocol"
)

// Dial connects to the daemon at socket, starting none.
func Dial(socket string) (*net.UnixConn, error) {
	return net.DialUnix("unix", nil, &net.UnixAddr{Name: socket, Net: "unix"})
}

// CanStart says that err, from Dial, means nothing listens there (no
// socket, or a dead daemon's): a daemon may be started.
func CanStart(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// Hello connects and says hello, starting no daemon.
func Hello(socket string) (*client.Client, error) {
	nc, err := Dial(socket)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cwd, _ := os.Getwd()
	return client.NewClient(ctx, nc, protocol.HelloParams{Version: buildinfo.Version, ProtocolVersion: protocol.ProtocolVersion, Pid: os.Getpid(), Cwd: cwd}, nil)
}

// Connect connects to the daemon at socket, starting one first when
// none answers. Forwarders starting at once take turns under a lock, so
// exactly one daemon starts and every forwarder reaches it.
func Connect(socket string, f *ServerFlags, idle time.Duration) (*net.UnixConn, error) {
	nc, err := Dial(socket)
	if err == nil || !CanStart(err) {
		return nc, err
	}
	if err := PrivateDir(filepath.Dir(socket)); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(socket+".start", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	// Whoever held the lock before us may have started it.
	if nc, err := Dial(socket); err == nil || !CanStart(err) {
		return nc, err
	}
	if err := start(socket, f, idle); err != nil {
		return nil, err
	}
	return Dial(socket)
}

// start starts `agentd serve` detached — its own session, no terminal,
// stdin and stdout on /dev/null, stderr into the log — and waits until it
// listens or says why it cannot.
func start(socket string, f *ServerFlags, idle time.Duration) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	args := append([]string{"serve", "--socket", socket, "--idle-timeout", idle.String(), "--ready-fd", "3"}, f.DaemonArgs()...)
	cmd := exec.Command(self, args...)
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	logPath := f.daemonLogPath()
	if lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
		cmd.Stderr = lf // a panic's trace lands in the log
		defer lf.Close()
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("start the agentd daemon: %w", err)
	}
	w.Close()
	go func() { _ = cmd.Wait() }() // reap it should it end while we run
	line, _ := bufio.NewReader(r).ReadString('\n')
	switch {
	case strings.HasPrefix(line, "ready"):
		return nil
	case strings.HasPrefix(line, "error "):
		msg := strings.TrimSpace(strings.TrimPrefix(line, "error "))
		if strings.Contains(msg, "already serving") {
			return nil // another one won a race we did not see: dial it
		}
		return fmt.Errorf("the agentd daemon could not start: %s", msg)
	}
	return fmt.Errorf("the agentd daemon exited as it started (see %s)", logPath)
}

//go:build unix

package daemonlink

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// One daemon runs per socket: it holds an exclusive lock beside the
// socket for its whole life, so a second one refuses to start, a dead
// one's socket can be replaced without asking anybody, and the lock's
// release is how a client learns the daemon is gone.

// Lock takes the daemon's lock for socket, or says who holds it. A
// holder whose socket no longer answers is a daemon on its way out (agentd
// stop): its lock is waited for, a while, rather than refused. The lock is
// the returned file's: it must stay open for the daemon's whole life.
func Lock(socket string) (*os.File, error) {
	path := socket + ".lock"
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		if nc, derr := Dial(socket); derr == nil {
			nc.Close()
		} else {
			err = flockWithin(f, syscall.LOCK_EX, 20*time.Second)
		}
	}
	if err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 32))
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("an agentd daemon is already serving %s (pid %s)", socket, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	// The lock is let go of by the kernel as the process ends, not before:
	// agentd stop waits for it (Gone) as the sign the daemon is gone.
	return f, nil
}

// Gone waits, at most d, for the daemon serving socket to end, and
// reports whether it did. The daemon holds its lock (Lock) for its whole
// life and the kernel lets go of it as the process ends, so a shared
// lock taken here is the moment a new daemon can start. This works alike
// on Linux and macOS, and, unlike signal 0, is not fooled by a daemon that
// ended but was not yet reaped by whoever started it.
func Gone(socket string, d time.Duration) bool {
	f, err := os.Open(socket + ".lock")
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	return flockWithin(f, syscall.LOCK_SH, d) == nil
}

// flockWithin takes f's lock (how: LOCK_EX or LOCK_SH), waiting at most d
// (EWOULDBLOCK then).
func flockWithin(f *os.File, how int, d time.Duration) error {
	got := make(chan error, 1)
	go func() { got <- syscall.Flock(int(f.Fd()), how) }()
	select {
	case err := <-got:
		return err
	case <-time.After(d):
		return syscall.EWOULDBLOCK // the blocked flock ends with the process
	}
}

//go:build unix

package main

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// daemonGone waits, at most d, for the daemon serving socket to end, and
// reports whether it did. The daemon holds its lock (lockDaemon) for its
// whole life and the kernel lets go of it as the process ends, so a shared
// lock taken here is the moment a new daemon can start. This works alike
// on Linux and macOS, and, unlike signal 0, is not fooled by a daemon that
// ended but was not yet reaped by whoever started it.
func daemonGone(socket string, d time.Duration) bool {
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

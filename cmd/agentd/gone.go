//go:build unix

package main

import (
	"errors"
	"syscall"
	"time"

	"github.com/agentd/agentd/sessions"
)

// processGone waits, at most d, for process pid (not a child of ours) to
// end, and reports whether it did. Linux is woken by the process's pidfd
// (gone_linux.go); elsewhere, and with AGENTD_PORTABLE=1, it looks every
// goneEvery with signal 0, which works wherever kill does.
func processGone(pid int, d time.Duration) bool {
	if !sessions.Portable() {
		if gone, ok := pidfdGone(pid, d); ok {
			return gone
		}
	}
	return polledGone(pid, d)
}

const goneEvery = 20 * time.Millisecond

func polledGone(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(goneEvery)
	}
}

//go:build unix

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The keeper makes sure no agent outlives agentd, even when agentd is
// killed with SIGKILL and cannot clean up. agentd starts `agentd keeper` in
// a session of its own (a signal to agentd's process group does not reach
// it) with a pipe on its stdin, and writes "+<pgid>" when a session starts
// and "-<pgid>" when it has ended. When the pipe closes — agentd exited, in
// whatever way — the keeper ends every process group still listed.

// keeperPipe is agentd's end of the keeper's stdin, and the keeper's pid:
// what a daemon passes on when it hands over (handover.go), so the keeper
// never sees the pipe close.
type keeperPipe struct {
	w   *os.File
	pid int
}

func (k *keeperPipe) Write(b []byte) (int, error) { return k.w.Write(b) }
func (k *keeperPipe) Close() error                { return k.w.Close() }
func (k *keeperPipe) fd() int                     { return rawFD(k.w) }

// startKeeper starts the keeper and returns the pipe agentd writes to.
func startKeeper(self string) (*keeperPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd := exec.Command(self, "keeper")
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, err
	}
	// Reap it when it ends so it does not linger as a zombie.
	go func() { _ = cmd.Wait() }()
	return &keeperPipe{w: w, pid: cmd.Process.Pid}, nil
}

// adoptKeeper takes over the keeper a daemon before this code started
// (handover.go): its pipe is descriptor fd, and it is our child.
func adoptKeeper(fd, pid int) *keeperPipe {
	if fd < 0 {
		return nil
	}
	syscall.CloseOnExec(fd)
	if p, err := os.FindProcess(pid); err == nil && pid > 0 {
		go func() { _, _ = p.Wait() }()
	}
	return &keeperPipe{w: os.NewFile(uintptr(fd), "keeper"), pid: pid}
}

func cmdKeeper(stdin io.Reader, stderr io.Writer) int {
	groups := map[int]bool{}
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if len(line) < 2 {
			continue
		}
		pgid, err := strconv.Atoi(line[1:])
		if err != nil || pgid <= 1 {
			continue
		}
		switch line[0] {
		case '+':
			groups[pgid] = true
		case '-':
			delete(groups, pgid)
		}
	}
	if len(groups) == 0 {
		return 0
	}
	for pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGHUP)
	}
	time.Sleep(time.Second)
	for pgid := range groups {
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err == nil {
			fmt.Fprintf(stderr, "agentd keeper: ended process group %d left behind by agentd\n", pgid)
		}
	}
	return 0
}

//go:build unix

// Package keeper makes sure no agent outlives agentd, even when agentd is
// killed with SIGKILL and cannot clean up. agentd starts `agentd keeper` in
// a session of its own (a signal to agentd's process group does not reach
// it) with a pipe on its stdin, and writes "+<pgid>" when a session starts
// and "-<pgid>" when it has ended. When the pipe closes — agentd exited, in
// whatever way — the keeper ends every process group still listed.
package keeper

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

// Pipe is agentd's end of the keeper's stdin, and the keeper's pid:
// what a daemon passes on when it hands over (package handover), so the keeper
// never sees the pipe close.
type Pipe struct {
	w   *os.File
	pid int
}

func (k *Pipe) Write(b []byte) (int, error) { return k.w.Write(b) }
func (k *Pipe) Close() error                { return k.w.Close() }

// File is the pipe's end, to pass across a handover's exec.
func (k *Pipe) File() *os.File { return k.w }

// Pid is the keeper's.
func (k *Pipe) Pid() int { return k.pid }

// Start starts the keeper and returns the pipe agentd writes to.
func Start(self string) (*Pipe, error) {
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
	return &Pipe{w: w, pid: cmd.Process.Pid}, nil
}

// Adopt takes over the keeper a daemon before this code started
// (package handover): its pipe is descriptor fd, and it is our child.
func Adopt(fd, pid int) *Pipe {
	if fd < 0 {
		return nil
	}
	syscall.CloseOnExec(fd)
	if p, err := os.FindProcess(pid); err == nil && pid > 0 {
		go func() { _, _ = p.Wait() }()
	}
	return &Pipe{w: os.NewFile(uintptr(fd), "keeper"), pid: pid}
}

func Run(stdin io.Reader, stderr io.Writer) int {
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

//go:build unix

package keeper

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// When its pipe closes the keeper ends every process group still listed,
// and none that was struck off.
func TestRunEndsTheGroupsLeft(t *testing.T) {
	// A test run under nohup ignores SIGHUP, and an ignored signal stays
	// ignored across exec, so the groups would only end at the SIGKILL
	// that follows. Catching it here instead gives the children its
	// default action (a caught signal is reset by exec).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	start := func() *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	left, ended := start(), start()
	r, w := io.Pipe()
	done := make(chan int)
	go func() { done <- Run(r, io.Discard) }()
	fmt.Fprintf(w, "+%d\n+%d\n-%d\nnonsense\n", left.Process.Pid, ended.Process.Pid, ended.Process.Pid)
	w.Close()
	if code := <-done; code != 0 {
		t.Errorf("Run exited %d", code)
	}
	exited := make(chan error, 1)
	go func() { exited <- left.Wait() }()
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(err.Error(), "hangup") {
			t.Errorf("the listed group ended with %v, want a hang-up", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the listed group (pid %d) runs on", left.Process.Pid)
	}
	if err := ended.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the group struck off was ended too: %v", err)
	}
}

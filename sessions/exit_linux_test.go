package sessions

import (
	"os/exec"
	"testing"
	"time"
)

// awaitExit parks until the child ends and leaves it to Wait: it returns
// only after the child's end, and Wait still reports the child's status.
func TestAwaitExitWaitsForTheChildAndLeavesItToWait(t *testing.T) {
	t.Setenv(EnvPortable, "") // the pidfd path; the portable one returns at once
	cmd := exec.Command("sh", "-c", "read x; exit 7")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := false
	t.Cleanup(func() {
		if !reaped {
			in.Close()
			_ = cmd.Wait()
		}
	})
	returned := make(chan struct{})
	go func() { awaitExit(cmd.Process.Pid); close(returned) }()
	select {
	case <-returned:
		t.Fatal("awaitExit returned while the child still ran")
	case <-time.After(200 * time.Millisecond):
	}
	in.Close() // the child reads EOF and exits 7
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatal("awaitExit did not return within 30 s of the child's end")
	}
	err = cmd.Wait()
	reaped = true
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("Wait after awaitExit: %v, want exit status 7", err)
	}
}

package sessions

import (
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentd/agentd/detect"
)

// nopEvents drops what sessions report.
type nopEvents struct{}

func (*nopEvents) State(Info, State)              {}
func (*nopEvents) Output(string, string)          {}
func (*nopEvents) Exited(string, ExitStatus)      {}
func (*nopEvents) Update(string, json.RawMessage) {}

func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/dev/fd") // Linux and macOS alike
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// 1000 sessions started and killed leave goroutines, open files and child
// processes where they were: no leaks, no zombies.
func TestSpawnKillCyclesLeakNothing(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	m := NewManager(Options{Rules: rules, Grace: 500 * time.Millisecond}, &nopEvents{})
	// Warm up once so lazily started runtime goroutines are in the baseline.
	warm, err := m.Spawn(SpawnSpec{Argv: []string{"true"}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	<-warm.Exited()
	time.Sleep(100 * time.Millisecond)
	baseGoroutines := goleak.IgnoreCurrent()
	baseFDs := openFDs(t)
	cycles := 1000
	if testing.Short() {
		cycles = 100
	}
	cwd := t.TempDir()
	for i := 0; i < cycles; i++ {
		s, err := m.Spawn(SpawnSpec{Argv: []string{"sleep", "30"}, Cwd: cwd, Cols: 80, Rows: 24})
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if err := s.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		select {
		case <-s.Exited():
		case <-time.After(5 * time.Second):
			t.Fatalf("cycle %d: session did not exit", i)
		}
	}
	// Timers armed by the last sessions (re-checks) run out within this.
	time.Sleep(300 * time.Millisecond)
	if err := goleak.Find(baseGoroutines); err != nil {
		t.Errorf("goroutines after %d cycles: %v", cycles, err)
	}
	if fds := openFDs(t); fds > baseFDs {
		t.Errorf("%d open files after %d cycles, %d before", fds, cycles, baseFDs)
	}
	// ps -A -o: the options procps and BSD ps (macOS) share.
	out, _ := exec.Command("ps", "-A", "-o", "stat=,pid=,ppid=").Output()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && strings.HasPrefix(f[0], "Z") && f[2] == strconv.Itoa(os.Getpid()) {
			t.Errorf("zombie child: %s", line)
		}
	}
	t.Logf("%d spawn/kill cycles: goroutines and %d open files at baseline, no zombies", cycles, baseFDs)
}

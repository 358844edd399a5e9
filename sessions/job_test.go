package sessions

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An agent started from an interactive shell runs as a job, in a process
// group of its own that a signal to the session's group does not reach;
// one that ignores the hang-up (Kilo did: it ran on for 30 s and more
// after its shell's session was killed) must still end with the session.
// The session is killed as soon as the job runs, when its shell may not
// have given it the terminal yet (reading the jobs from the terminal's
// foreground missed it so, 5 runs in 10 on a busy machine).
func TestKillEndsTheShellsForegroundJob(t *testing.T) {
	m := guardManager(t)
	pidFile := t.TempDir() + "/job.pid"
	s, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "--noprofile", "-i"}, Cwd: t.TempDir(), Cols: 80, Rows: 24,
		Env: map[string]*string{"PS1": ptr("$ ")}})
	if err != nil {
		t.Fatal(err)
	}
	awaitScreen(t, s, "$")
	// The job: ignores SIGHUP and SIGTERM, says its pid, and sleeps.
	if err := s.Input("sh -c 'trap \"\" HUP TERM; echo $$ > " + pidFile + "; echo job-runs; exec sleep 300'\r"); err != nil {
		t.Fatal(err)
	}
	awaitScreen(t, s, "\njob-runs")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	job, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pgid, _ := syscall.Getpgid(job); pgid == s.Pid || pgid <= 0 {
		t.Fatalf("the job %d is in group %d, the session's %d: the shell gave it no group of its own", job, pgid, s.Pid)
	}
	if err := s.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("the shell did not end within 30 s of session/kill")
	}
	deadline := time.Now().Add(m.opts.Grace + 20*time.Second)
	for syscall.Kill(job, 0) == nil && !isZombie(job) {
		if time.Now().After(deadline) {
			s.mu.Lock()
			recorded := s.jobs
			s.mu.Unlock()
			t.Logf("the jobs recorded: %v; the job's stat: %s", recorded, readStat(job))
			_ = syscall.Kill(job, syscall.SIGKILL)
			t.Fatalf("the shell's job %d still ran 20 s past the grace (%s) after the session was killed", job, m.opts.Grace)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readStat is a process's /proc stat line (Linux), for a failure's message.
func readStat(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return strings.TrimSpace(string(b))
}

func ptr(s string) *string { return &s }

// isZombie says whether pid has ended and waits to be reaped (Linux).
func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}

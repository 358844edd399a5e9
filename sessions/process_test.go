package sessions

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// awaitAgent waits, as a guard, until id's last published state is name
// under agent's rules.
func awaitAgent(t *testing.T, ev *recEvents, id, agent, name, reason string) State {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if st := ev.last(id); st.Agent == agent && st.Name == name && (reason == "" || st.Reason == reason) {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("session %s: waited 20 s for %s %s (%s), last published %+v", id, agent, name, reason, ev.last(id))
	return State{}
}

// A shell session follows its foreground: a program running in it is
// working (process.foreground_job), the shell back at its prompt is idle
// (process.shell_foreground), and an agent started in it (known by its
// process name: here sleep under the name aider) switches the session to
// that agent's rules until the shell is back.
func TestShellFollowsItsForeground(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	if _, ok := rules.Lookup("aider"); !ok {
		t.Fatal("no aider manifest: pick another agent known by process name")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(sleep, filepath.Join(dir, "aider")); err != nil {
		t.Fatal(err)
	}
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules}, ev)
	defer m.Shutdown()
	ps1, hist := "$ ", "/dev/null"
	s, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "--noprofile", "-i"}, Cwd: dir, Agent: "shell",
		Env: map[string]*string{"PS1": &ps1, "HISTFILE": &hist}})
	if err != nil {
		t.Fatal(err)
	}
	awaitScreen(t, s, "$")
	awaitAgent(t, ev, s.ID, "shell", Idle, "process.shell_foreground")

	if err := s.Input("sleep 30\r"); err != nil {
		t.Fatal(err)
	}
	awaitAgent(t, ev, s.ID, "shell", Working, "process.foreground_job")
	if err := s.Input("\x03"); err != nil { // Ctrl-C ends the job
		t.Fatal(err)
	}
	awaitAgent(t, ev, s.ID, "shell", Idle, "process.shell_foreground")

	if err := s.Input("./aider 30\r"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for ev.last(s.ID).Agent != "aider" {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for the session to take aider's rules; last published %+v", ev.last(s.ID))
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	manifest, base := s.manifest.Name, s.base.Name
	s.mu.Unlock()
	if manifest != "aider" || base != "shell" {
		t.Fatalf("rules in use %q over %q, want aider over the shell's", manifest, base)
	}
	if err := s.Input("\x03"); err != nil {
		t.Fatal(err)
	}
	awaitAgent(t, ev, s.ID, "shell", Idle, "process.shell_foreground")

	// Started through a wrapper (a shell that does not exec it), the
	// agent is found among the wrapper's children.
	if err := s.Input("sh -c './aider 30; :'\r"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for ev.last(s.ID).Agent != "aider" {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for the session to take aider's rules under sh; last published %+v", ev.last(s.ID))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Input("\x03"); err != nil {
		t.Fatal(err)
	}
	awaitAgent(t, ev, s.ID, "shell", Idle, "process.shell_foreground")
}

// readProc reads a process's name and arguments; parents finds a child
// under its parent, and descendants below it.
func TestProcTable(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// Caught in its exec, a process may show its new name and no
	// arguments yet: read until the exec is done.
	comm, argv, ok := readProc(cmd.Process.Pid)
	for deadline := time.Now().Add(20 * time.Second); ok && len(argv) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		comm, argv, ok = readProc(cmd.Process.Pid)
	}
	if !ok || comm != "sleep" || len(argv) != 2 || argv[1] != "30" {
		t.Fatalf("readProc: %q %q %v, want sleep [sleep 30]", comm, argv, ok)
	}
	var child *procEntry
	for _, p := range procWalks.since(time.Now()).procs {
		if p.pid == cmd.Process.Pid {
			child = &p
		}
	}
	if child == nil || child.ppid != os.Getpid() || child.pgrp != syscall.Getpgrp() {
		t.Fatalf("the child %d in the process table: %+v, want parent %d and group %d (this process's)", cmd.Process.Pid, child, os.Getpid(), syscall.Getpgrp())
	}
	found := false
	for _, pid := range descendants(os.Getpid(), 1) {
		found = found || pid == cmd.Process.Pid
	}
	if !found {
		t.Fatal("the child is not among this process's descendants")
	}
	if _, _, ok := readProc(1 << 30); ok {
		t.Fatal("readProc read a process that cannot exist")
	}
}

// Sessions that list their jobs at once share walks of the process table,
// and none gets a walk that began before it asked: 50 asking while a walk
// is under way wait for it and then take one more walk together, not 50.
func TestProcWalksShared(t *testing.T) {
	var mu sync.Mutex
	walks := 0
	release := make(chan struct{})
	w := walker{read: func() []procEntry {
		mu.Lock()
		walks++
		n := walks
		mu.Unlock()
		if n == 1 {
			<-release // the first walk is under way while the others ask
		}
		return []procEntry{{pid: n}}
	}}
	first := make(chan *procTable)
	go func() { first <- w.since(time.Now()) }()
	for {
		w.mu.Lock()
		under := w.walking != nil
		w.mu.Unlock()
		if under {
			break
		}
		runtime.Gosched()
	}
	asked := time.Now()
	var wg sync.WaitGroup
	got := make([]*procTable, 50)
	for i := range got {
		wg.Go(func() { got[i] = w.since(asked) })
	}
	close(release)
	wg.Wait()
	if tab := <-first; tab.procs[0].pid != 1 {
		t.Errorf("the first caller got walk %d, want 1", tab.procs[0].pid)
	}
	for i, tab := range got {
		if tab.at.Before(asked) {
			t.Fatalf("caller %d got a walk that began %v before it asked", i, asked.Sub(tab.at))
		}
	}
	if walks != 2 {
		t.Errorf("51 callers took %d walks, want 2: the one under way and one after it", walks)
	}
	// A walk new enough is reused.
	if tab := w.since(asked); walks != 2 || tab.procs[0].pid != 2 {
		t.Errorf("asking again for a walk since %v walked again (%d walks, got walk %d)", asked, walks, tab.procs[0].pid)
	}
}

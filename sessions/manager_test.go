package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// Spawn refuses what cannot run, saying why, and starts nothing.
func TestSpawnRefuses(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	m := NewManager(Options{Rules: rules}, &recEvents{states: map[string][]State{}})
	defer m.Shutdown()
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		spec SpawnSpec
		want string
	}{
		"no argv":         {SpawnSpec{Cwd: dir}, "argv is empty"},
		"empty program":   {SpawnSpec{Argv: []string{"", "x"}, Cwd: dir}, "argv is empty"},
		"too small":       {SpawnSpec{Argv: []string{"true"}, Cwd: dir, Cols: 1, Rows: 10}, "between 2 and 1000"},
		"too large":       {SpawnSpec{Argv: []string{"true"}, Cwd: dir, Cols: 80, Rows: 1001}, "between 2 and 1000"},
		"no such cwd":     {SpawnSpec{Argv: []string{"true"}, Cwd: filepath.Join(dir, "missing")}, "is not a directory"},
		"cwd is a file":   {SpawnSpec{Argv: []string{"true"}, Cwd: file}, "is not a directory"},
		"unknown agent":   {SpawnSpec{Argv: []string{"true"}, Cwd: dir, Agent: "no-such-agent"}, `unknown agent "no-such-agent"`},
		"no such program": {SpawnSpec{Argv: []string{"no-such-program-agentd"}, Cwd: dir}, "no-such-program-agentd"},
	} {
		if s, err := m.Spawn(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: session %v, error %v; want an error saying %q", name, s, err, c.want)
		}
	}
	if n := len(m.List()); n != 0 {
		t.Fatalf("refused spawns left %d sessions listed", n)
	}
	var nos *ErrNoSession
	if _, err := m.Get("s1"); !errors.As(err, &nos) || nos.ID != "s1" {
		t.Fatalf("get of an unknown session: %v, want ErrNoSession", err)
	}
}

// A session's environment is the client's (not agentd's) with the spawn's
// additions and removals and a terminal description; agentd's own
// variables are never passed on from the client, only set by agentd.
func TestSpawnEnvironment(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	m := NewManager(Options{Rules: rules, DaemonSocket: "/run/agentd-test.sock"}, &recEvents{states: map[string][]State{}})
	defer m.Shutdown()
	base := []string{"PATH=" + os.Getenv("PATH"), "FROM_CLIENT=1", "DROP_ME=1", "OVERRIDE=client", "TERM=dumb",
		EnvToken + "=another-session's", EnvSession + "=s42", EnvSocket + "=/elsewhere"}
	spawned := "spawn"
	s, err := m.Spawn(SpawnSpec{Argv: []string{"sleep", "60"}, Cwd: t.TempDir(), BaseEnv: base,
		Env: map[string]*string{"OVERRIDE": &spawned, "DROP_ME": nil}})
	if err != nil {
		t.Fatal(err)
	}
	env := procEnv(t, s.Pid)
	want := map[string]string{"FROM_CLIENT": "1", "OVERRIDE": "spawn", "TERM": "xterm-256color", "COLORTERM": "truecolor", EnvDaemonSocket: "/run/agentd-test.sock"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s=%q in the program's environment, want %q", k, env[k], v)
		}
	}
	for _, k := range []string{"DROP_ME", EnvToken, EnvSession, EnvSocket} {
		if v, ok := env[k]; ok {
			t.Errorf("%s=%q reached the program; want it removed", k, v)
		}
	}
	if _, ok := env["HOME"]; ok && !strings.Contains(strings.Join(base, "\n"), "HOME=") {
		t.Error("HOME reached the program from agentd's own environment, not the client's")
	}
}

// Names: a known agent's display name, otherwise the program's; ids are
// s1, s2, … and List is oldest first.
func TestSpawnNamesAndOrder(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	m := NewManager(Options{Rules: rules}, &recEvents{states: map[string][]State{}})
	defer m.Shutdown()
	dir := t.TempDir()
	a, err := m.Spawn(SpawnSpec{Argv: []string{"sleep", "60"}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "-c", "sleep 60"}, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.Spawn(SpawnSpec{Argv: []string{"sleep", "60"}, Cwd: dir, Name: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		s               *Session
		id, name, agent string
	}{{a, "s1", "sleep", "generic"}, {b, "s2", "Shell", "shell"}, {c, "s3", "mine", "generic"}} {
		if in := x.s.Info(); in.ID != x.id || in.Name != x.name || in.Agent != x.agent {
			t.Errorf("session %s %q agent %q, want %s %q agent %q", in.ID, in.Name, in.Agent, x.id, x.name, x.agent)
		}
	}
	var ids []string
	for _, s := range m.List() {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != "s1,s2,s3" {
		t.Fatalf("list %v, want s1,s2,s3", ids)
	}
	if n := m.Live(); n != 3 {
		t.Fatalf("live %d, want 3", n)
	}
}

// An exited session stays listed for KeepExited, then it is forgotten;
// the sessions still running stay.
func TestExitedSessionForgotten(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	m := NewManager(Options{Rules: rules, KeepExited: 300 * time.Millisecond}, &recEvents{states: map[string][]State{}})
	defer m.Shutdown()
	running, err := m.Spawn(SpawnSpec{Argv: []string{"sleep", "60"}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	short, err := m.Spawn(SpawnSpec{Argv: []string{"true"}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	awaitExited(t, short, "true")
	exitedAt := time.Now()
	if _, err := m.Get(short.ID); err != nil {
		t.Fatalf("the session is forgotten as it exits: %v", err)
	}
	if st := short.Info().State; st.Name != Exited {
		t.Fatalf("the exited session's state: %+v", st)
	}
	if n := m.Live(); n != 1 {
		t.Fatalf("live %d with one session exited, want 1", n)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := m.Get(short.ID); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the exited session was still listed 20 s after a KeepExited of 300 ms")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if kept := time.Since(exitedAt); kept < 250*time.Millisecond {
		t.Fatalf("forgotten %v after its exit, before KeepExited (300 ms)", kept)
	}
	if list := m.List(); len(list) != 1 || list[0] != running {
		t.Fatalf("listed %d sessions after the forgetting, want only the running one", len(list))
	}
}

// keeperLog is a Keeper that records what it is told and whether it was
// closed.
type keeperLog struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
}

func (k *keeperLog) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.buf.Write(p)
}

func (k *keeperLog) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	return nil
}

// Shutdown ends every session, even one that ignores SIGHUP (SIGKILL
// after the grace), tells the keeper each group's start and end, closes
// it, and refuses new sessions.
func TestShutdownEndsEverything(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	k := &keeperLog{}
	m := NewManager(Options{Rules: rules, Keeper: k, Grace: 200 * time.Millisecond}, &recEvents{states: map[string][]State{}})
	a, err := m.Spawn(SpawnSpec{Argv: []string{"sleep", "60"}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	stubborn, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "-c", `trap '' HUP; echo ready; while :; do sleep 1; done`}, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	awaitScreen(t, stubborn, "ready")
	done := make(chan struct{})
	go func() { m.Shutdown(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Shutdown did not return within 20 s")
	}
	for _, s := range []*Session{a, stubborn} {
		select {
		case <-s.Exited():
		default:
			t.Fatalf("session %s still runs after Shutdown returned", s.ID)
		}
	}
	if ex := stubborn.Info().Exit; ex == nil || ex.Signal != "SIGKILL" {
		t.Errorf("the session ignoring SIGHUP ended %+v, want SIGKILL after the grace", ex)
	}
	if _, err := m.Spawn(SpawnSpec{Argv: []string{"true"}, Cwd: t.TempDir()}); !errors.Is(err, ErrShuttingDown) {
		t.Fatalf("spawn after shutdown: %v, want ErrShuttingDown", err)
	}
	k.mu.Lock()
	told, closed := k.buf.String(), k.closed
	k.mu.Unlock()
	for _, s := range []*Session{a, stubborn} {
		for _, op := range []string{"+", "-"} {
			if line := fmt.Sprintf("%s%d\n", op, s.Pid); !strings.Contains(told, line) {
				t.Errorf("the keeper was not told %q; it heard %q", line, told)
			}
		}
	}
	if !closed {
		t.Error("the keeper was not closed at shutdown")
	}
}

// An ACP session may name an agent no manifest knows: it runs with the
// generic rules under that name, and is named as the agent named itself in
// initialize. A terminal session may not.
func TestSpawnACPUnknownAgent(t *testing.T) {
	rules, _ := detect.Load(nil, "")
	ev := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules}, ev)
	defer m.Shutdown()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	on := "1"
	s, err := m.Spawn(SpawnSpec{Argv: []string{self}, Cwd: t.TempDir(), ACP: true, Agent: "my-agent",
		Env: map[string]*string{"AGENTD_TEST_ACP_AGENT": &on}})
	if err != nil {
		t.Fatalf("spawn an ACP agent no manifest knows: %v", err)
	}
	if st := awaitPublished(t, ev, s.ID, Idle); st.Agent != "my-agent" {
		t.Fatalf("its state names agent %q, want my-agent", st.Agent)
	}
	if in := s.Info(); in.Agent != "my-agent" || in.Name != "fake-acp" {
		t.Fatalf("agent %q name %q, want my-agent named fake-acp by its initialize", in.Agent, in.Name)
	}
	var nos *ErrNoSession
	if _, err := m.Get("s99"); !errors.As(err, &nos) || err.Error() != `no session "s99"` {
		t.Fatalf("get s99: %v", err)
	}
}

// BenchmarkShutdown: the CPU agentd spends ending 200 idle sessions (each
// lists its jobs in the process table at the hang-up and at the release),
// per session. go test -run XXX -bench Shutdown ./sessions/
func BenchmarkShutdown(b *testing.B) {
	rules, _ := detect.Load(nil, "")
	const n = 200
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		m := NewManager(Options{Rules: rules, Grace: 5 * time.Second}, &recEvents{states: map[string][]State{}})
		for range n {
			if _, err := m.Spawn(SpawnSpec{Argv: []string{"sleep", "600"}, Cwd: b.TempDir()}); err != nil {
				b.Fatal(err)
			}
		}
		before := selfCPU(b)
		b.StartTimer()
		m.Shutdown()
		cpu += selfCPU(b) - before
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*n), "cpu-µs/session")
}

// selfCPU is the user and system time this process has used.
func selfCPU(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

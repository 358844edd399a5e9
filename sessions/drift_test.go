package sessions

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// A report that the agent works or waits, under a screen that reads idle
// for driftAfter, is drift: noted once per report, with a look asked for
// when the time is up; a screen that agrees in time, or a report of idle,
// is none.
func TestScreenDriftNotedOncePerReport(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := newMachine(State{Agent: "x", Name: Idle, Source: SourceScreen, Reason: "x.composer", Since: t0})
	step := func(v detect.Verdict, at time.Duration) (string, time.Duration) {
		_, _, again := m.step(facts{rules: knowsIdleRules, agent: "x", screen: v, now: t0.Add(at)})
		return m.takeScreenDrift(), again
	}
	m.reported(report{source: SourceHook, reason: "signal.needs-input", rec: &detect.StatusRecord{State: "blocked"}}, t0)
	if d, again := step(readyV, 0); d != "" || again != driftAfter {
		t.Fatalf("just reported: drift %q, again in %v; want none, a look in %v", d, again, driftAfter)
	}
	if d, _ := step(readyV, driftAfter-time.Millisecond); d != "" {
		t.Fatalf("drift %q before %v", d, driftAfter)
	}
	d, _ := step(readyV, driftAfter)
	if !strings.Contains(d, "signal.needs-input says blocked") || !strings.Contains(d, "x.composer") {
		t.Fatalf("after %v: drift %q, want the report and the screen's reason named", driftAfter, d)
	}
	if d, _ := step(readyV, 2*driftAfter); d != "" {
		t.Fatalf("the same report again: drift %q, want it noted once", d)
	}
	// A new report whose prompt the screen draws in time: none.
	m.reported(report{source: SourceHook, reason: "signal.working", rec: &detect.StatusRecord{State: "working"}}, t0.Add(3*driftAfter))
	step(readyV, 3*driftAfter)
	step(workingV, 3*driftAfter+time.Second)
	if d, again := step(workingV, 5*driftAfter); d != "" || again != 0 {
		t.Fatalf("a screen that agrees: drift %q, again in %v; want none", d, again)
	}
}

// An agent's processes busy while its screen reads idle, with nothing
// reported, is drift too: noted once per stretch, after a window of
// driftAfter averaging busyShare of a core. A quiet agent, one that speaks
// for itself, or a program under the generic rules is none. A screen no
// rule knows asks for looks on a clock; a composer only as it draws.
func TestBusyDriftNotedOncePerStretch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	unknownV := detect.Verdict{Agent: "x", State: detect.StateIdle, Reason: "x.no_rule"}
	m := newMachine(State{Agent: "x", Name: Idle, Source: SourceScreen, Reason: "x.composer", Since: t0})
	step := func(rules *detect.Manifest, v detect.Verdict, at time.Duration, cpu time.Duration) (string, time.Duration) {
		_, _, again := m.step(facts{rules: rules, agent: "x", screen: v, now: t0.Add(at), cpu: cpu, cpuRead: cpu >= 0})
		return m.takeScreenDrift(), again
	}
	if _, again := step(knowsIdleRules, readyV, 0, -1); !m.watchCPU || again != 0 {
		t.Fatalf("at a composer: watching %v, again in %v; want the CPU watched and no clock", m.watchCPU, again)
	}
	step(knowsIdleRules, unknownV, time.Second, 0)
	// 10 % of a core for 5 s: quiet, and a new window begins.
	if d, again := step(knowsIdleRules, unknownV, time.Second+driftAfter, driftAfter/10); d != "" || again != busyLook {
		t.Fatalf("a quiet agent: drift %q, again in %v; want none and a look in %v", d, again, busyLook)
	}
	// Then 60 %: not before the window is whole, then noted once.
	from := time.Second + driftAfter
	cpuAt := func(at time.Duration) time.Duration { return driftAfter/10 + (at-from)*6/10 }
	if d, _ := step(knowsIdleRules, unknownV, from+driftAfter-time.Second, cpuAt(from+driftAfter-time.Second)); d != "" {
		t.Fatalf("drift %q before a whole window", d)
	}
	d, again := step(knowsIdleRules, unknownV, from+driftAfter, cpuAt(from+driftAfter))
	if !strings.Contains(d, "used 60% of a core for 5s") || !strings.Contains(d, "x.no_rule") || again != 0 {
		t.Fatalf("busy for a window: drift %q, again in %v; want the share and the screen's reason named, and no more looks", d, again)
	}
	if d, _ := step(knowsIdleRules, readyV, from+3*driftAfter, cpuAt(from+3*driftAfter)); d != "" {
		t.Fatalf("the same stretch again: drift %q, want it noted once", d)
	}
	// The screen reads working: the stretch ends; a new one is noted anew.
	step(knowsIdleRules, workingV, from+4*driftAfter, -1)
	if m.watchCPU {
		t.Fatal("the CPU is still watched while the screen reads working")
	}
	at := from + 5*driftAfter
	step(knowsIdleRules, readyV, at, 0)
	if d, _ := step(knowsIdleRules, readyV, at+driftAfter, driftAfter/2); !strings.Contains(d, "(x.composer)") {
		t.Fatalf("a composer drawn under a busy agent: drift %q, want it noted", d)
	}

	// A report speaks for the agent: the report's own drift, not this.
	m.reported(report{source: SourceHook, reason: "hook.Stop", rec: &detect.StatusRecord{State: "idle"}}, t0.Add(at))
	step(knowsIdleRules, workingV, at+2*driftAfter, -1)
	step(knowsIdleRules, readyV, at+3*driftAfter, 0)
	if m.watchCPU {
		t.Fatal("the CPU is watched under a fresh report")
	}

	// The window is measured between the times the CPU was read (one walk
	// of the process table serves every session, and may be older than
	// the look): 3 s of CPU between reads 5 s apart is 60 %, though the
	// looks were 5.9 s apart.
	c := newMachine(State{Agent: "x", Name: Idle, Source: SourceScreen, Reason: "x.composer", Since: t0})
	c.step(facts{rules: knowsIdleRules, agent: "x", screen: readyV, now: t0})
	c.step(facts{rules: knowsIdleRules, agent: "x", screen: unknownV, now: t0.Add(time.Second), cpuAt: t0.Add(100 * time.Millisecond), cpu: time.Second, cpuRead: true})
	c.step(facts{rules: knowsIdleRules, agent: "x", screen: unknownV, now: t0.Add(7 * time.Second), cpuAt: t0.Add(5100 * time.Millisecond), cpu: 4 * time.Second, cpuRead: true})
	if d := c.takeScreenDrift(); !strings.Contains(d, "used 60% of a core for 5s") {
		t.Fatalf("CPU read by an older walk: drift %q, want 60%% over the reads' own 5 s", d)
	}

	// Under the generic rules a busy program is no news.
	g := newMachine(State{Agent: "x", Name: Idle, Source: SourceScreen, Since: t0})
	generic := &detect.Manifest{Name: detect.Generic, Rules: knowsIdleRules.Rules}
	g.step(facts{rules: generic, agent: "x", screen: readyV, now: t0})
	g.step(facts{rules: generic, agent: "x", screen: unknownV, now: t0.Add(time.Second), cpuRead: true})
	if g.watchCPU {
		t.Fatal("the CPU is watched under the generic rules")
	}
}

// ps's CPU times, as macOS and procps print them, and as this machine's
// ps prints its own.
func TestParsePsTimes(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0:01.25\n":            1250 * time.Millisecond,
		"  1:02.50\n 0:00.50 ": 63 * time.Second,
		"00:00:01\n01:00:00":   time.Hour + time.Second,
		"1-02:03:04":           26*time.Hour + 3*time.Minute + 4*time.Second,
	} {
		if got, ok := parsePsTimes(in); !ok || got != want {
			t.Errorf("parsePsTimes(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "12", "0:61", "x:00", "1:2:3:4"} {
		if got, ok := parsePsTimes(bad); ok {
			t.Errorf("parsePsTimes(%q) = %v; want it refused", bad, got)
		}
	}
	out, err := exec.Command("ps", "-o", "time=", "-p", strconv.Itoa(os.Getpid())).Output()
	if err != nil {
		t.Skipf("no ps here: %v", err)
	}
	if _, ok := parsePsTimes(string(out)); !ok {
		t.Errorf("this machine's ps printed %q, which parsePsTimes refuses", out)
	}
}

// busyRules are an agent's rules that know only its composer, `ready>`:
// any other screen is one no rule knows.
func busyRules(t *testing.T) *detect.Set {
	t.Helper()
	rules, warnings := detect.Load(map[string][]byte{"busy.toml": []byte(`name = "busy"
[identify]
argv = ["AGENTD_TEST_BUSY_AGENT"]
[[rule]]
id = "composer"
state = "idle"
match = ['^ready>$']
`)}, "test")
	if len(warnings) > 0 {
		t.Fatal(warnings)
	}
	return rules
}

// A real agent process, end to end: ready at its composer, then, after a
// key, a screen no rule knows while it burns a core. The session keeps
// that screen, saying the processes were busy, and reads it idle still.
func TestBusyAgentUnderAnUnknownScreenIsKept(t *testing.T) {
	rules := busyRules(t)
	dir := t.TempDir()
	m := NewManager(Options{Rules: rules, ScreensDir: dir}, &recEvents{states: map[string][]State{}})
	t.Cleanup(m.Shutdown)
	script := `printf 'ready>\n'; read -rsn1 k; printf '\033[2J\033[HCompiling the universe\n'; while :; do :; done`
	s, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "--noprofile", "-c", script}, Cwd: t.TempDir(), Cols: 80, Rows: 24, Agent: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	awaitState(t, s, Idle)
	if err := s.Input("g"); err != nil {
		t.Fatal(err)
	}
	awaitScreen(t, s, "Compiling the universe")
	// The session looks on its own clock now; a busy machine may give the
	// loop little of a core, so the guard is generous.
	var kept []string
	deadline := time.Now().Add(90 * time.Second)
	for len(kept) == 0 {
		if time.Now().After(deadline) {
			cpu, _, ok := sessionCPU(s.Pid)
			t.Fatalf("no screen kept in 90 s while the agent looped under a screen no rule knows (its CPU time %v, read %v; state %+v)", cpu, ok, s.Info().State)
		}
		time.Sleep(100 * time.Millisecond)
		kept, _ = KeptScreens(dir)
	}
	b, err := os.ReadFile(kept[0])
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := ReadScreenRecord(b)
	if !ok || rec.Agent != "busy" || rec.Verdict.Reason != "busy.no_rule" || !strings.Contains(rec.Why, "of a core") || !strings.Contains(rec.Raw, "Compiling the universe") {
		t.Fatalf("kept %s: agent %q, verdict %s, why %q; want busy, busy.no_rule, the CPU share named and the screen's text", kept[0], rec.Agent, rec.Verdict.Reason, rec.Why)
	}
	if st := s.Info().State; st.Name != Idle {
		t.Errorf("state %s (%s): drift is kept, not acted on; want idle", st.Name, st.Reason)
	}
}

// TestCPUReadingHoldsNoOtherSession: a session whose CPU is watched reads
// it off the pump. With the walk of the process table held up, another
// session's prompt still reaches the client.
func TestCPUReadingHoldsNoOtherSession(t *testing.T) {
	rules := busyRules(t)
	events := &recEvents{states: map[string][]State{}}
	m := NewManager(Options{Rules: rules}, events)
	t.Cleanup(m.Shutdown)
	walking, release := make(chan struct{}, 1), make(chan struct{})
	procWalks.mu.Lock()
	read := procWalks.read
	procWalks.read = func() []procEntry {
		select {
		case walking <- struct{}{}:
		default:
		}
		<-release
		return read()
	}
	procWalks.last = nil // no walk of an earlier test may answer
	procWalks.mu.Unlock()
	t.Cleanup(func() {
		close(release)
		procWalks.mu.Lock()
		procWalks.read = read
		procWalks.mu.Unlock()
	})

	// A composer, then a screen no rule knows: the session watches its CPU.
	script := `printf 'ready>\n'; read -rsn1 k; printf '\033[2J\033[HCompiling the universe\n'; sleep 60`
	a, err := m.Spawn(SpawnSpec{Argv: []string{"bash", "--norc", "--noprofile", "-c", script}, Cwd: t.TempDir(), Cols: 80, Rows: 24, Agent: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	awaitTold(t, events, a.ID, Idle)
	if err := a.Input("g"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-walking:
	case <-time.After(30 * time.Second):
		t.Fatalf("the session under a screen no rule knows did not read its CPU within 30 s (state %+v)", a.Info().State)
	}
	b := spawnScript(t, m, `read -r -p "Delete the branch? [y/n] " x; sleep 60`)
	awaitTold(t, events, b.ID, Blocked)
}

// awaitTold waits until the session was told to be in state name, as the
// pump tells it: it classifies nothing itself.
func awaitTold(t *testing.T, events *recEvents, id, name string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if events.last(id).Name == name {
			return
		}
		if time.Now().After(deadline) {
			events.mu.Lock()
			told := events.states[id]
			events.mu.Unlock()
			t.Fatalf("session %s was not told %s within 20 s; it was told %+v", id, name, told)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

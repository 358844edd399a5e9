package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
	rec "github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions"
)

var (
	replayOnce sync.Once
	replayPath string
	replayErr  error
)

// replayBinary builds fixtures/replay, which plays a recording on its
// terminal with the original timing.
func replayBinary(t testing.TB) string {
	t.Helper()
	replayOnce.Do(func() {
		replayPath = filepath.Join(filepath.Dir(agentdBinary(t)), "replay")
		if out, err := exec.Command("go", "build", "-o", replayPath, "../../fixtures/replay").CombinedOutput(); err != nil {
			replayErr = fmt.Errorf("build replay: %v\n%s", err, out)
		}
	})
	if replayErr != nil {
		t.Fatal(replayErr)
	}
	return replayPath
}

// recording is a session the recorder wrote (its label, rec.Session) and
// the files of its output.
type recording struct {
	Raw, Timing string
	rec.Session
}

func loadRecordings(t testing.TB) []recording {
	files, _ := filepath.Glob("../../fixtures/*/*/sessions/*.json")
	sort.Strings(files)
	// AGENTD_BENCH_EVERY=N replays every Nth recording only: a shorter
	// run, for comparing two builds in one sitting (all of them take
	// about 25 minutes on a 2-core machine).
	if every, _ := strconv.Atoi(os.Getenv("AGENTD_BENCH_EVERY")); every > 1 {
		var some []string
		for i := 0; i < len(files); i += every {
			some = append(some, files[i])
		}
		files = some
	}
	var out []recording
	for _, f := range files {
		var r recording
		data, err := os.ReadFile(f)
		if err != nil || json.Unmarshal(data, &r) != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		r.Raw = strings.TrimSuffix(f, ".json") + ".raw"
		r.Timing = strings.TrimSuffix(f, ".json") + ".timing"
		out = append(out, r)
	}
	return out
}

// writes splits a recording into its original writes and the gaps before
// them, capped at maxGap.
func (r recording) writes(t testing.TB, maxGap time.Duration) ([][]byte, []time.Duration) {
	ws, pauses, err := rec.Read(r.Raw, r.Timing)
	if err != nil {
		t.Fatal(err)
	}
	return ws, rec.Capped(pauses, maxGap)
}

// BenchmarkStateLatency replays real recordings through a PTY hosted by the
// real agentd, with their original timing (pauses capped at 500 ms), and
// measures from the write that completed a frame to the session/state line
// on agentd's stdout. The expected transitions come from Simulate, the live
// path's logic run offline on the same bytes; over-wait is the latency
// beyond the wait Simulate's clock has before it decides (the rules' own
// holds among it). Run with -benchtime=1x.
func BenchmarkStateLatency(b *testing.B) {
	const maxGap = 500 * time.Millisecond
	rules, _ := detect.Load(nil, "")
	c := startAgentd(b)
	replay := replayBinary(b)
	// lat is from the write that completed a frame to the notification;
	// over is the part of it beyond the clock's own wait (Transition.Wait:
	// settle and tick, a held frame, a rule's hold), what agentd's
	// machinery adds. Both matter: a rule's deliberate 700 ms hold is in
	// lat's tail by design, and over says whether the daemon kept time.
	var lat, over []time.Duration
	unexpected, missed, unlabelled := 0, 0, 0
	for b.Loop() {
		for _, r := range loadRecordings(b) {
			mf, ok := rules.Lookup(r.Agent)
			if !ok {
				continue
			}
			ws, gaps := r.writes(b, maxGap)
			want := sessions.Simulate(mf, r.Cols, r.Rows, ws, gaps)
			logPath := filepath.Join(b.TempDir(), "writes.log")
			var s spawned
			c.mustCall("session/spawn", map[string]any{
				"argv": []string{replay, "-raw", abs(r.Raw), "-timing", abs(r.Timing), "-log", logPath, "-maxgap", maxGap.String(), "-hold", "300ms"},
				"cwd":  b.TempDir(), "cols": r.Cols, "rows": r.Rows, "agent": r.Agent, "hooks": false,
			}, &s)
			from := 0
			c.waitState(s.SessionID, "exited", &from, 5*time.Minute)
			got := c.stateNotes(s.SessionID)
			writeAt := readWriteLog(b, logPath)
			labels := map[string]bool{}
			for _, l := range r.Labels {
				labels[l.State] = true
			}
			var live []rec.Live
			for _, g := range got {
				if g.note.State != "exited" && g.note.Reason != "process.starting" && g.note.State != "idle" && g.note.State != "working" && !labels[g.note.State] {
					unlabelled++
					b.Logf("%s: %s (%s) is not among the recording's labels", r.Raw, g.note.State, g.note.Reason)
				}
				live = append(live, rec.Live{State: g.note.State, Reason: g.note.Reason, At: g.at})
			}
			// The same matching as agentd-bench's (recording.Match).
			var wanted []rec.Wanted
			for _, w := range want {
				wanted = append(wanted, rec.Wanted{State: w.State.Name, Reason: w.State.Reason, Write: w.Write, Wait: w.Wait})
			}
			m := rec.Match(wanted, live, writeAt)
			for _, u := range m.Unexpected {
				b.Logf("%s: unexpected %s (%s)", r.Raw, u.State, u.Reason)
			}
			unexpected += len(m.Unexpected)
			missed += m.Missed
			for _, t := range m.Timed {
				lat = append(lat, t.Latency)
				over = append(over, t.OverWait)
			}
		}
	}
	if len(lat) == 0 {
		b.Fatal("no transitions measured")
	}
	q := func(ds []time.Duration, at float64) float64 {
		return float64(ds[int(at*float64(len(ds)-1))].Microseconds()) / 1000
	}
	for _, ds := range [][]time.Duration{lat, over} {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	}
	b.ReportMetric(q(lat, 0.5), "p50-ms")
	b.ReportMetric(q(lat, 0.99), "p99-ms")
	b.ReportMetric(q(over, 0.5), "over-wait-p50-ms")
	b.ReportMetric(q(over, 0.99), "over-wait-p99-ms")
	b.ReportMetric(float64(len(lat)), "transitions")
	b.ReportMetric(float64(unexpected), "unexpected")
	b.ReportMetric(float64(missed), "missed")
	b.ReportMetric(float64(unlabelled), "unlabelled-states")
}

func abs(p string) string {
	a, _ := filepath.Abs(p)
	return a
}

func readWriteLog(t testing.TB, path string) []time.Time {
	at, _, err := rec.ReadWriteLog(path)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

type timedNote struct {
	note stateNote
	at   time.Time
}

// stateNotes returns a session's state notifications with their arrival.
func (c *stdioClient) stateNotes(sessionID string) []timedNote {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []timedNote
	for _, n := range c.notes {
		if n.Method != "session/state" {
			continue
		}
		var s stateNote
		_ = json.Unmarshal(n.Params, &s)
		if s.SessionID == sessionID {
			out = append(out, timedNote{note: s, at: n.At})
		}
	}
	return out
}

// BenchmarkSpinnerCPU measures agentd's CPU with 50 sessions each redrawing
// a spinner at 10 Hz for 30 s, and with 50 idle sessions, as percent of one
// core (from /proc/<pid>/stat). Run with -benchtime=1x.
func BenchmarkSpinnerCPU(b *testing.B) {
	replay := replayBinary(b)
	for b.Loop() {
		for _, tc := range []struct {
			name string
			argv []string
		}{
			{"spinning", []string{replay, "-spinner", "10", "-for", "40s"}},
			{"idle", []string{"sleep", "40"}},
		} {
			var extra []string
			if dir := os.Getenv("AGENTD_PROFILE_DIR"); dir != "" {
				extra = append(extra, "--cpuprofile", filepath.Join(dir, tc.name+".pprof"))
			}
			c := startAgentd(b, extra...)
			for range 50 {
				var s spawned
				c.mustCall("session/spawn", map[string]any{"argv": tc.argv, "cwd": b.TempDir(), "agent": "demo"}, &s)
			}
			time.Sleep(3 * time.Second) // past start-up
			before, switched := cpuTicks(b, c.cmd.Process.Pid), contextSwitches(c.cmd.Process.Pid)
			t0 := time.Now()
			time.Sleep(30 * time.Second)
			used := cpuTicks(b, c.cmd.Process.Pid) - before
			switched = contextSwitches(c.cmd.Process.Pid) - switched
			pct := 100 * float64(used) / 100 / time.Since(t0).Seconds() // USER_HZ is 100
			b.ReportMetric(pct, tc.name+"-cpu%")
			b.ReportMetric(float64(switched)/time.Since(t0).Seconds(), tc.name+"-sleeps/s")
			c.close()
		}
	}
}

// contextSwitches is how many times pid's threads have gone to sleep
// (voluntary context switches, over /proc/<pid>/task/*/status): each is a
// wake-up later, what an idle or ticking daemon spends most of its CPU on.
// Threads that ended are not counted.
func contextSwitches(pid int) int64 {
	status, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	var n int64
	for _, f := range status {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(data)) {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				k, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += k
			}
		}
	}
	return n
}

func cpuTicks(t testing.TB, pid int) int64 {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return ut + st
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/fixtures/recording"
)

// The scale section: agentd's CPU and memory with many sessions, beside a
// build of the same rules that classifies every session on a 50 ms ticker
// (agentd --detect-poll 50ms), in the same run.

func init() {
	register(section{name: "scale", what: "CPU and memory with 10, 50, 200 sessions looping real recordings, and idle ones, beside a 50 ms poll", run: runScale})
}

// loopMaxGap caps the pauses of a looping replay, as the latency bench
// does; loopHold is the pause between two passes.
const (
	loopMaxGap = 500 * time.Millisecond
	loopHold   = 500 * time.Millisecond
)

// rec is one committed session recording.
type rec struct {
	Name        string // agent/version/scenario
	Raw, Timing string
	Agent       string `json:"agent"`
	Cols        int    `json:"cols"`
	Rows        int    `json:"rows"`
}

// benchRecordings lists fixtures/*/*/sessions/*.json, sorted.
func (b *bench) benchRecordings() ([]rec, error) {
	files, _ := filepath.Glob(filepath.Join(b.root, "fixtures/*/*/sessions/*.json"))
	sort.Strings(files)
	var out []rec
	for _, f := range files {
		var r rec
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		base := strings.TrimSuffix(f, ".json")
		r.Raw, r.Timing = base+".raw", base+".timing"
		rel, _ := filepath.Rel(filepath.Join(b.root, "fixtures"), base)
		r.Name = strings.Replace(rel, "/sessions/", "/", 1)
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no recordings under fixtures/*/*/sessions")
	}
	return out, nil
}

// writes splits a recording into its writes and the pause before each,
// capped at maxGap.
func (r rec) writes(maxGap time.Duration) ([][]byte, []time.Duration, error) {
	ws, pauses, err := recording.Read(r.Raw, r.Timing)
	return ws, recording.Capped(pauses, maxGap), err
}

// procCPUTicks is a process's utime and stime in USER_HZ (100 a second).
func procCPUTicks(pid int) (user, kernel int64, err error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	user, _ = strconv.ParseInt(f[11], 10, 64)
	kernel, _ = strconv.ParseInt(f[12], 10, 64)
	return user, kernel, nil
}

// procRSSKB is a process's resident set (VmRSS) in KB.
func procRSSKB(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// cpuOver returns the process's CPU over d as percent of one core, all of
// it and the kernel's part.
func cpuOver(pid int, d time.Duration) (all, kernel float64, err error) {
	u0, k0, err := procCPUTicks(pid)
	if err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	time.Sleep(d)
	u1, k1, err := procCPUTicks(pid)
	if err != nil {
		return 0, 0, err
	}
	secs := time.Since(t0).Seconds() // ticks/s = % of one core at USER_HZ 100
	return float64(u1-u0+k1-k0) / secs, float64(k1-k0) / secs, nil
}

// scaleRun is one agentd measured with a workload.
type scaleRun struct {
	cpu    float64 // % of one core
	kernel float64 // the part of cpu spent in the kernel
	rss    int64   // KB at the end of the window
	rss0   int64   // KB just before the first spawn
	fds    int     // open descriptors at the end of the window
	fds0   int     // and just before the first spawn
	nofile string  // its RLIMIT_NOFILE, "soft/hard"
}

// measureSessions starts the agentd binary bin with extra flags, spawns n
// sessions with spec(i), waits warm, then measures CPU over window, RSS and
// open descriptors.
func (b *bench) measureSessions(bin, label string, extra []string, n int, spec func(i int) map[string]any, warm, window time.Duration) (scaleRun, error) {
	if dir := os.Getenv("AGENTD_PROFILE_DIR"); dir != "" {
		// A CPU profile of each agentd, for finding its hot path.
		name := fmt.Sprintf("scale-%d-%s-%s.pprof", n, label, map[bool]string{true: "poll", false: "change"}[len(extra) > 0])
		extra = append(append([]string(nil), extra...), "--cpuprofile", filepath.Join(dir, name))
	}
	p, err := b.startAgentdBinary(bin, extra...)
	if err != nil {
		return scaleRun{}, err
	}
	defer p.close()
	var r scaleRun
	if r.rss0, err = procRSSKB(p.pid()); err != nil {
		return r, err
	}
	if r.fds0, err = procFDCount(p.pid()); err != nil {
		return r, err
	}
	if r.nofile, err = procNoFile(p.pid()); err != nil {
		return r, err
	}
	for i := range n {
		if _, err := p.spawn(spec(i)); err != nil {
			return r, fmt.Errorf("spawn %d: %w", i, err)
		}
	}
	time.Sleep(warm)
	if r.cpu, r.kernel, err = cpuOver(p.pid(), window); err != nil {
		return r, err
	}
	if r.fds, err = procFDCount(p.pid()); err != nil {
		return r, err
	}
	r.rss, err = procRSSKB(p.pid())
	return r, err
}

// procFDCount is how many descriptors a process has open.
func procFDCount(pid int) (int, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(fds), err
}

// procNoFile is a process's limit on open descriptors (RLIMIT_NOFILE), soft
// and hard, from /proc/<pid>/limits: Go raises the soft limit to the hard
// one at start, so a shell's ulimit -n says less than the daemon has.
func procNoFile(pid int) (string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return "", err
	}
	return noFileLimit(string(data))
}

// noFileLimit reads the "Max open files" line of a /proc/<pid>/limits.
func noFileLimit(limits string) (string, error) {
	for _, line := range strings.Split(limits, "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			if f := strings.Fields(rest); len(f) >= 2 {
				return f[0] + "/" + f[1], nil
			}
		}
	}
	return "", fmt.Errorf("no \"Max open files\" line in the limits")
}

// loopingSession is the spawn of session i looping one of recs (round
// robin), pauses capped at loopMaxGap, loopHold between passes.
func (b *bench) loopingSession(recs []rec) func(i int) map[string]any {
	return func(i int) map[string]any {
		r := recs[i%len(recs)]
		return map[string]any{
			"argv": []string{b.replay, "-raw", r.Raw, "-timing", r.Timing, "-maxgap", loopMaxGap.String(), "-hold", loopHold.String(), "-loop"},
			"cwd":  b.tmp, "cols": r.Cols, "rows": r.Rows, "agent": r.Agent, "hooks": false,
		}
	}
}

// idleSession is the spawn of a session that draws nothing: a blank
// 120x40 screen with a sleeping process.
func (b *bench) idleSession(int) map[string]any {
	return map[string]any{"argv": []string{"sleep", "3600"}, "cwd": b.tmp, "cols": 120, "rows": 40, "agent": "demo", "hooks": false}
}

// loopRate is the writes per second one looping session makes on average
// over the recordings it cycles through (pauses capped, hold between).
func loopRate(recs []rec, hold time.Duration) (float64, error) {
	var writes int
	var dur time.Duration
	for _, r := range recs {
		ws, gaps, err := r.writes(loopMaxGap)
		if err != nil {
			return 0, err
		}
		writes += len(ws)
		dur += hold
		for _, g := range gaps {
			dur += g
		}
	}
	return float64(writes) / dur.Seconds(), nil
}

func runScale(b *bench) (string, error) {
	recs, err := b.benchRecordings()
	if err != nil {
		return "", err
	}
	counts := []int{10, 50, 200}
	warm, window := 4*time.Second, 20*time.Second
	if b.quick {
		counts = []int{10, 50}
		warm, window = 2*time.Second, 5*time.Second
	}
	rate, err := loopRate(recs, loopHold)
	if err != nil {
		return "", err
	}
	looping, idle := b.loopingSession(recs), b.idleSession
	poll := []string{"--detect-poll", "50ms"}

	var sb strings.Builder
	fmt.Fprintf(&sb, "Each looping session replays one of the %d committed recordings (round robin) again and again, pauses capped at %s, %s between passes: about %.0f writes a second per session. CPU over %s after %s of warm-up, from /proc/<pid>/stat; RSS from VmRSS at the end. \"poll\" is the same agentd with `--detect-poll 50ms` (render and classify every session every 50 ms), run right after it.\n\n",
		len(recs), loopMaxGap, loopHold, rate, window, warm)
	sb.WriteString("| sessions | workload | agentd CPU (% of a core) | per write | 50 ms poll CPU | per write | agentd / poll | agentd RSS | poll RSS | target |\n|---|---|---|---|---|---|---|---|---|---|\n")
	// perWrite is CPU time (user and kernel) per PTY write the sessions
	// make, at rate writes a second each.
	perWrite := func(r scaleRun, n int, what string) string {
		if what != "looping recordings" {
			return "—"
		}
		us := func(cpu float64) float64 { return cpu / 100 * 1e6 / (float64(n) * rate) }
		return fmt.Sprintf("%.0f µs (%.0f in the kernel)", us(r.cpu), us(r.kernel))
	}
	row := func(n int, label, what string, spec func(int) map[string]any, target func(a, p scaleRun) string) error {
		b.logf("scale: %d sessions, %s, on change", n, what)
		a, err := b.measureSessions(b.agentd, label, nil, n, spec, warm, window)
		if err != nil {
			return err
		}
		b.logf("scale: %d sessions, %s, 50 ms poll", n, what)
		pr, err := b.measureSessions(b.agentd, label, poll, n, spec, warm, window)
		if err != nil {
			return err
		}
		ratio := "—"
		if a.cpu < 0.05 {
			ratio = "≈ 0"
		} else if pr.cpu > 0 {
			ratio = fmt.Sprintf("1/%.1f", pr.cpu/max(a.cpu, 0.01))
		}
		fmt.Fprintf(&sb, "| %d | %s | %.1f %% | %s | %.1f %% | %s | %s | %.1f MB | %.1f MB | %s |\n",
			n, what, a.cpu, perWrite(a, n, what), pr.cpu, perWrite(pr, n, what), ratio, float64(a.rss)/1024, float64(pr.rss)/1024, target(a, pr))
		return nil
	}
	for _, n := range counts {
		target := func(a, p scaleRun) string { return "—" }
		if n == 50 {
			target = func(a, p scaleRun) string {
				return fmt.Sprintf("≤ 6 %% (on the way to 3 %%): %s", metMissed(a.cpu <= 6))
			}
		}
		if err := row(n, "loop", "looping recordings", looping, target); err != nil {
			return "", err
		}
	}
	if err := row(50, "idle", "idle (`sleep`)", idle, func(a, p scaleRun) string {
		return "~0: " + metMissed(a.cpu < 0.5)
	}); err != nil {
		return "", err
	}

	mem, err := b.memoryPerSession(recs)
	if err != nil {
		return "", err
	}
	sb.WriteString("\n" + mem)
	return sb.String(), nil
}

func metMissed(ok bool) string {
	if ok {
		return "**met**"
	}
	return "**missed**"
}

// memoryPerSession measures agentd's RSS with 0, 50 and 200 sessions at
// 120x40, blank ones (sleep) and ones that drew a real recording to its end
// (replayed without pauses, then held).
func (b *bench) memoryPerSession(recs []rec) (string, error) {
	var drawn []rec
	for _, r := range recs {
		if r.Cols == 120 && r.Rows == 40 {
			drawn = append(drawn, r)
		}
	}
	steps := []int{50, 200}
	settleFor := 3 * time.Second
	if b.quick {
		steps = []int{50}
		settleFor = 2 * time.Second
	}
	kinds := []struct {
		what string
		spec func(i int) map[string]any
	}{
		{"blank (`sleep`)", b.idleSession},
		{"drew a real recording", func(i int) map[string]any {
			r := drawn[i%len(drawn)]
			return map[string]any{
				"argv": []string{b.replay, "-raw", r.Raw, "-timing", r.Timing, "-maxgap", "0s", "-hold", "1h"},
				"cwd":  b.tmp, "cols": 120, "rows": 40, "agent": r.Agent, "hooks": false,
			}
		}},
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "Memory: agentd's RSS with N sessions at 120×40, %s after the last spawn; per session is (RSS(N) − RSS(0)) / N.\n\n", settleFor)
	sb.WriteString("| sessions | what they show | agentd RSS | per session | target ≤ 256 KB |\n|---|---|---|---|---|\n")
	for _, k := range kinds {
		p, err := b.startAgentd()
		if err != nil {
			return "", err
		}
		time.Sleep(settleFor)
		base, err := procRSSKB(p.pid())
		if err != nil {
			p.close()
			return "", err
		}
		fmt.Fprintf(&sb, "| 0 | %s | %.1f MB | — | — |\n", k.what, float64(base)/1024)
		have := 0
		for _, n := range steps {
			b.logf("scale: memory, %d sessions, %s", n, k.what)
			for ; have < n; have++ {
				if _, err := p.spawn(k.spec(have)); err != nil {
					p.close()
					return "", err
				}
			}
			time.Sleep(settleFor)
			rss, err := procRSSKB(p.pid())
			if err != nil {
				p.close()
				return "", err
			}
			per := float64(rss-base) / float64(n)
			fmt.Fprintf(&sb, "| %d | %s | %.1f MB | %.0f KB | %s |\n", n, k.what, float64(rss)/1024, per, metMissed(per <= 256))
		}
		p.close()
	}
	return sb.String(), nil
}

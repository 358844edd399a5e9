package main

// The pump section (issue 43): this tree's agentd beside the pump before
// issue 43's changes and a 50 ms poll, in one table from one sitting, so
// the three are compared on the same machine in the same state.
//
//   - state latency over the committed recordings, against
//     sessions.Simulate of this tree (the oracle for all three daemons),
//     and the part of it beyond the wait the pump's clock designs;
//   - CPU with 10, 50, 200 sessions looping recordings, and with 1,000 idle
//     ones, with their memory and descriptors per session.

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions"
)

var (
	pumpBaselineRev = flag.String("baseline", pumpDefaultBaseline, "pump section: the git revision whose agentd is the previous pump (built from this repository's history, for the comparison only)")
	pumpEvery       = flag.Int("every", 0, "pump section: replay every Nth committed recording (0: 8, or 32 with -quick)")
)

// Every 8th recording is about 16 minutes of playing (667 recordings on
// 2026-12-07), which keeps a full run under half an hour; every 4th would
// be 32 minutes on its own.
const (
	pumpEveryFull  = 8
	pumpEveryQuick = 32
)

// pumpDefaultBaseline is the last commit before issue 43's changes to the
// pump: the previous pump.
const pumpDefaultBaseline = "ab2d478"

func init() {
	register(section{name: "pump", what: "state latency, CPU and memory of this agentd beside the previous pump (-baseline) and a 50 ms poll, in one sitting", run: runPump})
}

// pumpColumn is one daemon of the table.
type pumpColumn struct {
	name   string
	bin    string   // agentd binary
	extra  []string // flags after --stdio --private
	absent string   // why it cannot run, shown in its cells; "" when it runs
}

// pumpLatency is one column's state latency over the replays.
type pumpLatency struct {
	lat, over          []time.Duration // sorted once all replays are in
	unexpected, missed int
	failed             []string // replays that did not complete, and why
	down               string   // why the daemon did not start, or ""
}

// pumpLoad is one column's run with a number of sessions, or why it failed.
type pumpLoad struct {
	run scaleRun
	err error
}

func runPump(b *bench) (string, error) {
	start := time.Now()
	every := *pumpEvery
	if every <= 0 {
		every = pumpEveryFull
		if b.quick {
			every = pumpEveryQuick
		}
	}
	rev := *pumpBaselineRev
	baseline, removeBaseline, why := b.buildBaseline(rev)
	defer removeBaseline()
	if why != "" {
		b.logf("pump: the previous pump is left out: %s", why)
	}
	cols := []pumpColumn{
		{name: "agentd", bin: b.agentd},
		{name: "previous pump", bin: baseline, absent: why},
		{name: "50 ms poll", bin: b.agentd, extra: []string{"--detect-poll", "50ms"}},
	}

	all, err := b.benchRecordings()
	if err != nil {
		return "", err
	}
	var recs []*sessionRec
	for i := 0; i < len(all); i += every {
		r, err := readSessionRec(strings.TrimSuffix(all[i].Raw, ".raw") + ".json")
		if err != nil {
			return "", err
		}
		r.name = all[i].Name
		recs = append(recs, r)
	}
	lats, played, transitions, err := b.pumpLatencies(cols, recs)
	if err != nil {
		return "", err
	}

	counts, idle := []int{10, 50, 200}, 1000
	warm, window := 4*time.Second, 20*time.Second
	if b.quick {
		counts, idle = []int{10, 50}, 100
		warm, window = 2*time.Second, 5*time.Second
	}
	// loads runs each column in turn with n sessions, so the three of a
	// row are measured minutes apart at most.
	loads := func(n int, what string, spec func(int) map[string]any) []pumpLoad {
		out := make([]pumpLoad, len(cols))
		for i, c := range cols {
			if c.absent != "" {
				out[i].err = errors.New(c.absent)
				continue
			}
			b.logf("pump: %s, %d sessions %s", c.name, n, what)
			t0 := time.Now()
			label := "pump-" + strings.ReplaceAll(c.name, " ", "-") + "-" + what
			out[i].run, out[i].err = b.measureSessions(c.bin, label, c.extra, n, spec, warm, window)
			if out[i].err != nil {
				b.logf("pump: %s, %d sessions %s: %v", c.name, n, what, out[i].err)
			} else {
				b.logf("pump: %s, %d sessions %s: spawning took %s", c.name, n, what, (time.Since(t0) - warm - window).Round(100*time.Millisecond))
			}
		}
		return out
	}
	looping := map[int][]pumpLoad{}
	for _, n := range counts {
		looping[n] = loads(n, "looping", b.loopingSession(all))
	}
	idleRuns := loads(idle, "idle", b.idleSession)

	var sb strings.Builder
	if b.quick {
		sb.WriteString("-quick: a smoke test, not numbers to publish.\n\n")
	}
	previous := "the commit before issue 43's changes (a 5 ms tick, a 2 ms settle, and a walk of /proc per session for its CPU)"
	if rev != pumpDefaultBaseline {
		previous = "given with `-baseline`"
	}
	fmt.Fprintf(&sb, "Three daemons in one sitting. **agentd** is %s. **previous pump** is agentd built from %s, %s, built from this repository's history for this comparison only. **50 ms poll** is this tree's agentd with `--detect-poll 50ms` (it renders and classifies every session every 50 ms).\n\n", b.treeName(), rev, previous)
	which := "every " + ordinal(every)
	if every == 1 {
		which = "each"
	}
	fmt.Fprintf(&sb, "Latency: %s of the %d committed session recordings (%d recordings, %d transitions expected by this tree's `sessions.Simulate`, the oracle for all three daemons), played by `fixtures/replay` with pauses capped at %s, one recording at a time, the three daemons at once (each its own session); from the start of the replayer's write that completed a frame to the arrival of the matching `session/state` notification. A rule may hold a state on purpose (e.g. `input.ready_after` 700 ms), so the raw p99 includes designed holds; over-wait is latency minus the wait the pump's clock itself designs (`Transition.Wait`), what the daemon adds.\n\n",
		which, len(all), played, transitions, loopMaxGap)
	fmt.Fprintf(&sb, "CPU: each daemon in turn with N sessions looping the recordings (as in the scale section) or N idle (`sleep 3600`, agent demo, 120×40), over %s after all are spawned and %s of warm-up, from /proc/<pid>/stat, in %% of one core. Per session at %d idle: (RSS(N) − RSS(0)) / N and (fds(N) − fds(0)) / N, with RSS(0) and fds(0) read just before the first spawn. Targets are marked on the agentd column only.\n\n",
		window, warm, idle)

	table := pumpTable(cols, lats, counts, looping, idle, idleRuns)
	sb.WriteString(table)
	sb.WriteString("\n")
	for i, c := range cols {
		if c.absent != "" {
			continue
		}
		l := lats[i]
		if l.down != "" {
			fmt.Fprintf(&sb, "- %s did not start: %s\n", c.name, l.down)
			continue
		}
		fmt.Fprintf(&sb, "- %s: %d transitions timed, %d unexpected, %d missed", c.name, len(l.lat), l.unexpected, l.missed)
		if len(l.failed) > 0 {
			fmt.Fprintf(&sb, "; %d replays failed (first: %s)", len(l.failed), l.failed[0])
		}
		sb.WriteString(".\n")
	}
	sb.WriteString("\n")
	for _, i := range []int{1, 2} {
		fmt.Fprintf(&sb, "- agentd / %s: CPU at 50 looping sessions %s; latency p50 %s.\n", cols[i].name,
			ratioOf(cpuAt(looping[50], 0), cpuAt(looping[50], i), "%.1f %%"),
			ratioOf(p50Of(lats[0]), p50Of(lats[i]), "%.1f ms"))
	}
	var limits []string
	for i, c := range cols {
		if c.absent == "" && idleRuns[i].run.nofile != "" {
			limits = append(limits, c.name+" "+idleRuns[i].run.nofile)
		}
	}
	if len(limits) > 0 {
		fmt.Fprintf(&sb, "\nRLIMIT_NOFILE (soft/hard, /proc/<pid>/limits) of each daemon in the idle run: %s.\n", strings.Join(limits, ", "))
	}
	fmt.Fprintf(&sb, "\nThe section took %s (building the previous pump included).\n", time.Since(start).Round(time.Second))
	return sb.String(), nil
}

// treeName says which commit this tree's agentd was built from, and
// whether tracked files differed from it.
func (b *bench) treeName() string {
	out, err := exec.Command("git", "-C", b.root, "log", "-1", "--format=%h").Output()
	if err != nil {
		return "this tree"
	}
	name := "this tree (HEAD " + strings.TrimSpace(string(out))
	if dirty, err := exec.Command("git", "-C", b.root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(dirty) > 0 {
		name += " with uncommitted changes"
	}
	return name + ")"
}

// buildBaseline builds agentd at rev from the repository's own history, in
// a worktree of its own under the bench's temporary folder. remove takes the
// worktree away again; why says, when not "", why there is no binary (the
// column says it instead of failing the section).
func (b *bench) buildBaseline(rev string) (bin string, remove func(), why string) {
	remove = func() {}
	if err := exec.Command("git", "-C", b.root, "rev-parse", "--verify", "--quiet", rev+"^{commit}").Run(); err != nil {
		return "", remove, fmt.Sprintf("—: %s not in this clone", rev)
	}
	dir := filepath.Join(b.tmp, "baseline")
	b.logf("pump: building agentd at %s (git worktree in %s)", rev, dir)
	if out, err := exec.Command("git", "-C", b.root, "worktree", "add", "--detach", dir, rev).CombinedOutput(); err != nil {
		return "", remove, fmt.Sprintf("—: git worktree add %s failed: %s", rev, firstLine(out, err))
	}
	remove = func() {
		if out, err := exec.Command("git", "-C", b.root, "worktree", "remove", "--force", dir).CombinedOutput(); err != nil {
			b.logf("pump: git worktree remove %s: %s", dir, firstLine(out, err))
		}
	}
	bin = filepath.Join(b.tmp, "agentd-baseline")
	build := exec.Command("go", "build", "-o", bin, "./cmd/agentd")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		return "", remove, fmt.Sprintf("—: %s does not build: %s", rev, firstLine(out, err))
	}
	return bin, remove, ""
}

// firstLine is the first line of a command's output, or its error when it
// wrote nothing.
func firstLine(out []byte, err error) string {
	if line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n"); line != "" {
		return line
	}
	return err.Error()
}

// pumpLatencies plays each recording through every column's daemon at once,
// one recording at a time, and matches their notifications to this tree's
// Simulate. It returns the columns' latencies, how many recordings were
// played and how many transitions Simulate expected over them.
func (b *bench) pumpLatencies(cols []pumpColumn, recs []*sessionRec) ([]pumpLatency, int, int, error) {
	rules, errs := detect.Load(nil, "")
	if len(errs) > 0 {
		return nil, 0, 0, fmt.Errorf("load rules: %v", errs)
	}
	out := make([]pumpLatency, len(cols))
	procs := make([]*agentdProc, len(cols))
	for i, c := range cols {
		if c.absent != "" {
			continue
		}
		p, err := b.startAgentdBinary(c.bin, c.extra...)
		if err != nil {
			out[i].down = err.Error()
			continue
		}
		defer p.close()
		procs[i] = p
	}
	played, transitions := 0, 0
	// The log gets every transition over 100 ms beyond its designed wait,
	// and with AGENTD_BENCH_DEBUG every one.
	debug := os.Getenv("AGENTD_BENCH_DEBUG") != ""
	for n, r := range recs {
		m, ok := rules.Lookup(r.Agent)
		if !ok {
			b.logf("pump: %s: no rules for %s, not played", r.name, r.Agent)
			continue
		}
		if err := r.load(); err != nil {
			return nil, 0, 0, err
		}
		want := sessions.Simulate(m, r.Cols, r.Rows, r.writes, recording.Capped(r.delays, loopMaxGap))
		b.logf("pump: %d of %d: %s (%d transitions)", n+1, len(recs), r.name, len(want))
		results := make([]*liveResult, len(cols))
		var wg sync.WaitGroup
		for i, p := range procs {
			if p == nil {
				continue
			}
			wg.Go(func() { results[i] = b.replayLive(p, r, loopMaxGap, 300*time.Millisecond) })
		}
		wg.Wait()
		for i, res := range results {
			if res == nil {
				continue
			}
			if res.err != nil {
				out[i].failed = append(out[i].failed, r.name+": "+res.err.Error())
				b.logf("pump: %s: %s: %v", cols[i].name, r.name, res.err)
				continue
			}
			mt := matchTransitions(want, res.states, res.writes)
			out[i].unexpected += len(mt.Unexpected)
			out[i].missed += mt.Missed
			for _, t := range mt.Timed {
				if debug || t.OverWait > 100*time.Millisecond {
					b.logf("pump: %s: %s: %s (%s) after write %d: %s, over-wait %s", cols[i].name, r.name, t.State, t.Reason, t.Write, ms(t.Latency), ms(t.OverWait))
				}
				out[i].lat = append(out[i].lat, t.Latency)
				out[i].over = append(out[i].over, t.OverWait)
			}
		}
		played++
		transitions += len(want)
		r.writes, r.delays = nil, nil // played: its bytes are not needed again
	}
	for i := range out {
		slices.Sort(out[i].lat)
		slices.Sort(out[i].over)
	}
	return out, played, transitions, nil
}

// pumpTable is the table: one row a measure, one column a daemon.
func pumpTable(cols []pumpColumn, lats []pumpLatency, counts []int, looping map[int][]pumpLoad, idle int, idleRuns []pumpLoad) string {
	var sb strings.Builder
	sb.WriteString("| measure |")
	for _, c := range cols {
		sb.WriteString(" " + c.name + " |")
	}
	sb.WriteString(" target |\n|---|" + strings.Repeat("---|", len(cols)) + "---|\n")
	first := true
	// row writes a measure: cell(i) is column i's value and whether it has
	// one; target, when not "", is marked met or missed on agentd's value.
	row := func(measure string, cell func(i int) (string, float64, bool), target string, met func(float64) bool) {
		sb.WriteString("| " + measure + " |")
		agentd, agentdOK := 0.0, false
		for i, c := range cols {
			text := "—"
			switch {
			case c.absent != "" && first:
				text = c.absent
			case c.absent != "":
			default:
				var v float64
				var ok bool
				text, v, ok = cell(i)
				if i == 0 {
					agentd, agentdOK = v, ok
				}
			}
			sb.WriteString(" " + text + " |")
		}
		first = false
		switch {
		case target == "":
			sb.WriteString(" — |\n")
		case agentdOK:
			sb.WriteString(" " + target + ": " + metMissed(met(agentd)) + " |\n")
		default:
			sb.WriteString(" " + target + " |\n")
		}
	}
	latency := func(pick func(pumpLatency) []time.Duration, q float64) func(int) (string, float64, bool) {
		return func(i int) (string, float64, bool) {
			if lats[i].down != "" {
				return "—: did not start", 0, false
			}
			ds := pick(lats[i])
			if len(ds) == 0 {
				return "—: nothing timed", 0, false
			}
			d := quantile(ds, q)
			return ms(d), float64(d.Microseconds()) / 1000, true
		}
	}
	lat := func(l pumpLatency) []time.Duration { return l.lat }
	over := func(l pumpLatency) []time.Duration { return l.over }
	row("state latency p50", latency(lat, 0.5), "≤ 3 ms", func(v float64) bool { return v <= 3 })
	row("state latency p99 (designed holds included)", latency(lat, 0.99), "≤ 10 ms", func(v float64) bool { return v <= 10 })
	row("state latency max", latency(lat, 1), "", nil)
	row("over-wait p50", latency(over, 0.5), "", nil)
	row("over-wait p99", latency(over, 0.99), "", nil)

	cpu := func(runs []pumpLoad) func(int) (string, float64, bool) {
		return func(i int) (string, float64, bool) {
			if runs[i].err != nil {
				return "—: " + runs[i].err.Error(), 0, false
			}
			return fmt.Sprintf("%.1f %%", runs[i].run.cpu), runs[i].run.cpu, true
		}
	}
	for _, n := range counts {
		target, met := "", func(float64) bool { return false }
		if n == 50 {
			target, met = "≤ 2 %", func(v float64) bool { return v <= 2 }
		}
		row(fmt.Sprintf("CPU, %d sessions looping recordings", n), cpu(looping[n]), target, met)
	}
	row(fmt.Sprintf("CPU, %s idle sessions", thousands(idle)), cpu(idleRuns), "≤ 1 %", func(v float64) bool { return v <= 1 })
	perSession := func(i int) (string, float64, bool) {
		if idleRuns[i].err != nil {
			return "—: " + idleRuns[i].err.Error(), 0, false
		}
		r := idleRuns[i].run
		kb := float64(r.rss-r.rss0) / float64(idle)
		return fmt.Sprintf("%.0f KB (RSS %.1f MB, %.1f MB before)", kb, float64(r.rss)/1024, float64(r.rss0)/1024), kb, true
	}
	row(fmt.Sprintf("%s idle: RSS per session", thousands(idle)), perSession, "≤ 256 KB", func(v float64) bool { return v <= 256 })
	fds := func(i int) (string, float64, bool) {
		if idleRuns[i].err != nil {
			return "—: " + idleRuns[i].err.Error(), 0, false
		}
		r := idleRuns[i].run
		per := float64(r.fds-r.fds0) / float64(idle)
		return fmt.Sprintf("%.2f (%s open, %d before)", per, thousands(r.fds), r.fds0), per, true
	}
	row(fmt.Sprintf("%s idle: fds per session", thousands(idle)), fds, "", nil)
	return sb.String()
}

// cpuAt is column i's CPU in a row of runs, or -1 when it has none.
func cpuAt(runs []pumpLoad, i int) float64 {
	if i >= len(runs) || runs[i].err != nil {
		return -1
	}
	return runs[i].run.cpu
}

// p50Of is a column's median latency in ms, or -1 when it has none.
func p50Of(l pumpLatency) float64 {
	if len(l.lat) == 0 {
		return -1
	}
	return float64(quantile(l.lat, 0.5).Microseconds()) / 1000
}

// ratioOf says agentd's value against another daemon's, both in unit (a
// format of one number); a negative value is one that was not measured.
func ratioOf(agentd, other float64, unit string) string {
	if agentd < 0 || other < 0 {
		return "— (not measured on both)"
	}
	both := fmt.Sprintf(unit+" / "+unit, agentd, other)
	if other == 0 {
		return "— (" + both + ")"
	}
	return fmt.Sprintf("%.2f (%s)", agentd/other, both)
}

// ordinal writes n as "1st", "2nd", "32nd", "8th".
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprint(n) + suffix
}

// thousands writes n with a comma every three digits, as the prose does.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

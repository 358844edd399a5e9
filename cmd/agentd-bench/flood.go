package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions"
)

// The flood section: the state latency of a quiet session, alone and while
// another session in the same agentd floods output.

func init() {
	register(section{name: "flood", what: "p50/p99 state latency of a quiet session, alone and beside a session flooding output", run: runFlood})
}

// quietRec is a recording played as the quiet session, with the
// transitions the live path should produce on it.
type quietRec struct {
	rec
	want []sessions.Transition
}

type latencyRun struct {
	lat                []time.Duration
	unexpected, missed int
	cpu                float64 // agentd, % of one core over the phase
}

func runFlood(b *bench) (string, error) {
	recs, err := b.benchRecordings()
	if err != nil {
		return "", err
	}
	budget := 60 * time.Second
	if b.quick {
		budget = 15 * time.Second
	}
	quiet, err := pickQuiet(recs, budget)
	if err != nil {
		return "", err
	}
	var big rec
	var bigSize int64
	for _, r := range recs {
		if st, err := os.Stat(r.Raw); err == nil && st.Size() > bigSize && r.Cols == 120 && r.Rows == 40 {
			big, bigSize = r, st.Size()
		}
	}
	phases := []struct {
		name, what string
		flood      map[string]any // nil: alone
	}{
		{"alone", "alone", nil},
		{"yes", "beside `yes` (as fast as the PTY takes it)", map[string]any{
			"argv": []string{"yes"}, "cwd": b.tmp, "cols": 120, "rows": 40, "agent": "generic", "hooks": false}},
		{"real", fmt.Sprintf("beside %s replayed without pauses, looping", big.Name), map[string]any{
			"argv": []string{b.replay, "-raw", big.Raw, "-timing", big.Timing, "-maxgap", "0s", "-hold", "0s", "-loop"},
			"cwd":  b.tmp, "cols": 120, "rows": 40, "agent": big.Agent, "hooks": false}},
	}
	if b.quick {
		phases = phases[:2]
	}
	ntrans := 0
	for _, q := range quiet {
		ntrans += len(q.want)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "The quiet session replays, one after another, the %d shortest committed recordings (pauses capped at %s; %d expected transitions, from `sessions.Simulate`), each in a fresh session; latency is from the replayer's write of the frame that made a state to the `session/state` line on agentd's stdout, as in BenchmarkStateLatency. Each row is its own agentd; the flooding session starts 1 s before the quiet ones. agentd CPU is over the whole row.\n\n",
		len(quiet), loopMaxGap, ntrans)
	sb.WriteString("| quiet session | transitions timed | p50 | p99 | max | p99 / alone | agentd CPU | target p99 ≤ 2× alone |\n|---|---|---|---|---|---|---|---|\n")
	var alone time.Duration
	for _, ph := range phases {
		b.logf("flood: %s", ph.what)
		r, err := b.latencyPhase(quiet, ph.flood)
		if err != nil {
			return "", fmt.Errorf("%s: %w", ph.name, err)
		}
		if len(r.lat) == 0 {
			return "", fmt.Errorf("%s: no transitions timed", ph.name)
		}
		p50, p99, pmax := quantile(r.lat, 0.5), quantile(r.lat, 0.99), r.lat[len(r.lat)-1]
		ratio, target := "—", "—"
		if ph.flood == nil {
			alone = p99
		} else if alone > 0 {
			x := float64(p99) / float64(alone)
			ratio = fmt.Sprintf("%.2f×", x)
			target = metMissed(x <= 2)
		}
		extra := ""
		if r.unexpected+r.missed > 0 {
			extra = fmt.Sprintf(" (%d unexpected, %d missed)", r.unexpected, r.missed)
		}
		fmt.Fprintf(&sb, "| %s | %d%s | %s | %s | %s | %s | %.1f %% | %s |\n",
			ph.what, len(r.lat), extra, ms(p50), ms(p99), ms(pmax), ratio, r.cpu, target)
	}
	return sb.String(), nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[int(q*float64(len(sorted)-1))]
}

// pickQuiet takes the shortest recordings (capped pauses) with at least one
// transition until their playing time reaches budget.
func pickQuiet(recs []rec, budget time.Duration) ([]quietRec, error) {
	rules, _ := detect.Load(nil, "")
	type cand struct {
		quietRec
		d time.Duration
	}
	var cs []cand
	for _, r := range recs {
		m, ok := rules.Lookup(r.Agent)
		if !ok {
			continue
		}
		ws, gaps, err := r.writes(loopMaxGap)
		if err != nil {
			return nil, err
		}
		var d time.Duration
		for _, g := range gaps {
			d += g
		}
		want := sessions.Simulate(m, r.Cols, r.Rows, ws, gaps)
		if len(want) == 0 {
			continue
		}
		cs = append(cs, cand{quietRec{r, want}, d})
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []quietRec
	var total time.Duration
	for _, c := range cs {
		if total >= budget {
			break
		}
		out = append(out, c.quietRec)
		total += c.d + 300*time.Millisecond
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no recording with a state transition")
	}
	return out, nil
}

// latencyPhase runs one agentd, starts the flooding session if any, then
// plays each quiet recording in its own session and times its transitions.
func (b *bench) latencyPhase(quiet []quietRec, flood map[string]any) (latencyRun, error) {
	var r latencyRun
	p, err := b.startAgentd()
	if err != nil {
		return r, err
	}
	defer p.close()
	if flood != nil {
		if _, err := p.spawn(flood); err != nil {
			return r, fmt.Errorf("flood: %w", err)
		}
		time.Sleep(time.Second)
	}
	u0, k0, _ := procCPUTicks(p.pid())
	t0 := time.Now()
	for i, q := range quiet {
		logPath := filepath.Join(b.tmp, fmt.Sprintf("writes-%d.log", i))
		id, err := p.spawn(map[string]any{
			"argv": []string{b.replay, "-raw", q.Raw, "-timing", q.Timing, "-log", logPath, "-maxgap", loopMaxGap.String(), "-hold", "300ms"},
			"cwd":  b.tmp, "cols": q.Cols, "rows": q.Rows, "agent": q.Agent, "hooks": false,
		})
		if err != nil {
			return r, err
		}
		if err := p.waitState(id, "exited", 2*time.Minute); err != nil {
			return r, err
		}
		writeAt, _, err := recording.ReadWriteLog(logPath)
		if err != nil {
			return r, err
		}
		m := matchTransitions(q.want, p.states(id), writeAt)
		r.unexpected += len(m.Unexpected)
		r.missed += m.Missed
		for _, t := range m.Timed {
			r.lat = append(r.lat, t.Latency)
			if t.Latency > 100*time.Millisecond {
				b.logf("flood: %s: %s (%s) %s after write %d of %d", q.Name, t.State, t.Reason, t.Latency.Round(time.Millisecond), t.Write, len(writeAt))
			}
		}
	}
	u1, k1, _ := procCPUTicks(p.pid())
	r.cpu = float64(u1-u0+k1-k0) / time.Since(t0).Seconds()
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	return r, nil
}

// readWrites reads the replayer's -log: "<unix-nanos> <end-offset>" a write.

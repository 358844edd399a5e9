package main

// The "detectors" section: the supervisor method. Real full-session
// recordings are replayed with their original timing through a PTY hosted
// by the real agentd, and every detector is scored against the recordings'
// labelled states, all on the same bytes at the same write times:
//
//   - agentd as shipped: its live session/state notifications.
//   - the same rules (sessions.Decider: manifests, OSC 7501 reports, state
//     bookkeeping) on a 700 ms sweep and on a 50 ms poll of an emulated
//     screen fed write by write (sessions/term);
//   - the same rules on a pseudo-screen made of the last 8 KB of output with
//     escape sequences stripped, classified after every write;
//   - output-silence timers of 1, 3 and 5 s: "needs attention" once no byte
//     came for N s, until the next byte.
//
// Truth comes from the recorder (fixtures/record): each label carries
// seen_offset (where the evidence the recorder waited for first appeared),
// gone_offset (where it left the screen) and answer_offset (the next input).

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions"
	"github.com/agentd/agentd/sessions/term"
)

func init() {
	register(section{
		name: "detectors",
		what: "replay real recordings through agentd and score it beside sweeps, polls, an 8 KB tail and silence timers",
		run:  runDetectors,
	})
}

// detectorAgents are the real agents whose recordings are scored.
var detectorAgents = []string{"claude", "codex", "gemini", "opencode"}

// detectorNames in table order; the first is agentd.
var detectorNames = []string{
	"agentd (classify on change)",
	"same rules, 700 ms sweep",
	"same rules, 50 ms poll",
	"same rules, last 8 KB stripped",
	"silence 1 s",
	"silence 3 s",
	"silence 5 s",
}

// ---- the recordings ----

// tlEvent and recLabel are a session's timeline events and labels, as
// the recorder writes them.
type (
	tlEvent  = recording.Event
	recLabel = recording.Label
)

// sessionRec is a recorded session: its label and its output.
type sessionRec struct {
	path string // .json
	name string // agent/scenario
	recording.Session
	writes [][]byte
	delays []time.Duration // the pause before each write, as recorded
}

func loadSessionRecs(root string) ([]*sessionRec, error) {
	var out []*sessionRec
	for _, a := range detectorAgents {
		files, _ := filepath.Glob(filepath.Join(root, "fixtures", a, "*", "sessions", "*.json"))
		sort.Strings(files)
		for _, f := range files {
			r, err := readSessionRec(f)
			if err != nil {
				return nil, err
			}
			r.name = r.Agent + "/" + r.Scenario
			scored := false
			for _, l := range r.Labels {
				scored = scored || l.SeenFrom != ""
			}
			if !scored {
				continue // no labels, or labels from before the recorder kept seen offsets
			}
			if err := r.load(); err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

func (r *sessionRec) base() string { return strings.TrimSuffix(r.path, ".json") }

func (r *sessionRec) load() (err error) {
	r.writes, r.delays, err = recording.Read(r.base()+".raw", r.base()+".timing")
	return err
}

// ---- truth ----

// window is a stretch of a recording whose true state is known: blocked
// from the prompt's first appearance until it left the screen, or a
// non-blocked state from its evidence's appearance until the screen or
// the person moved on.
type truthWin struct {
	from, to time.Duration
	state    string
	open     bool // blocked window that lasted to the end: persistence not scored
	what     string
}

// truthWindows turns a recording's labels into windows, given the time
// each output offset reached the terminal (at), the time a driver action
// (at an offset and recorded second) falls at in the replay (act), and the
// end of the replay.
//
// A blocked window runs from seen_offset to gone_offset (the end when the
// prompt never left). Any other window runs from seen_offset to the first
// of: its evidence leaving the screen, the next input, the next label's
// seen_offset, or a screen the recorder waited for next appearing (a wait
// after the capture whose condition began to hold after it).
func truthWindows(labels []recLabel, timeline []tlEvent, at func(int) time.Duration, act func(int, float64) time.Duration, next func(int) time.Duration, end time.Duration) []truthWin {
	var out []truthWin
	used := map[int]bool{}
	for i, l := range labels {
		if l.SeenFrom == "" {
			continue
		}
		if l.Capture == "" {
			l.Capture = l.Mark
		}
		from := at(l.SeenOffset)
		if l.State == detect.StateBlocked {
			w := truthWin{from: from, to: end, state: l.State, open: true, what: l.Capture}
			// The next label of another state: the prompt was gone by then.
			nextSeen := time.Duration(-1)
			for _, n := range labels[i+1:] {
				if n.SeenFrom != "" && n.SeenOffset > l.SeenOffset && n.State != detect.StateBlocked {
					nextSeen = at(n.SeenOffset)
					break
				}
			}
			switch {
			case l.GoneOffset != nil && (nextSeen < 0 || at(*l.GoneOffset) <= nextSeen):
				w.to, w.open = at(*l.GoneOffset), false
			case l.AnswerOffset != nil && (nextSeen < 0 || at(*l.AnswerOffset) < nextSeen):
				// The evidence outlived the prompt (a question that stays in
				// the transcript) or none was waited for: the prompt went with
				// the agent's first output after the answer.
				w.to, w.open = min(end, next(*l.AnswerOffset)), false
				if l.GoneOffset == nil {
					// No evidence of its own (a capture after a key that moved
					// the selection): only part of a prompt with an end.
					w.open = true
				}
			case nextSeen >= 0:
				w.to = nextSeen
			}
			if w.to > w.from || w.open {
				out = append(out, w)
			}
			continue
		}
		to := end
		if l.GoneOffset != nil {
			to = min(to, at(*l.GoneOffset))
		}
		if l.AnswerOffset != nil && l.AnswerSeconds != nil {
			to = min(to, act(*l.AnswerOffset, *l.AnswerSeconds))
		}
		for _, n := range labels[i+1:] {
			if n.SeenFrom != "" && n.SeenOffset > l.SeenOffset {
				to = min(to, at(n.SeenOffset))
				break
			}
		}
		// The capture's place on the timeline, then the waits after it.
		for k, e := range timeline {
			if used[k] || (e.Action != "capture "+l.Capture && e.Action != "mark "+l.Capture) || e.Offset != l.Offset {
				continue
			}
			used[k] = true
			for _, n := range timeline[k+1:] {
				if strings.HasPrefix(n.Action, "type ") || strings.HasPrefix(n.Action, "key ") || strings.HasPrefix(n.Action, "capture ") || strings.HasPrefix(n.Action, "mark ") {
					break
				}
				if n.HeldOffset != nil && *n.HeldOffset > l.Offset {
					to = min(to, at(*n.HeldOffset))
				}
			}
			break
		}
		if to > from {
			out = append(out, truthWin{from: from, to: to, state: l.State, what: l.Capture})
		}
	}
	return mergePrompts(out)
}

// mergePrompts makes one prompt of blocked windows that overlap or touch:
// labels taken on one prompt (before and after moving its selection, the
// questions of one form). A window with no end of its own inside a closed
// one is part of it.
func mergePrompts(ws []truthWin) []truthWin {
	var blocked, out []truthWin
	for _, w := range ws {
		if w.state == detect.StateBlocked {
			blocked = append(blocked, w)
		} else {
			out = append(out, w)
		}
	}
	sort.SliceStable(blocked, func(i, j int) bool { return blocked[i].from < blocked[j].from })
	var merged []truthWin
	for _, w := range blocked {
		if n := len(merged); n > 0 && w.from <= merged[n-1].to {
			m := &merged[n-1]
			switch {
			case w.open && !m.open:
				// The closed window saw the prompt go: that is the end.
			case w.to > m.to:
				m.to, m.open = w.to, w.open
			}
			m.what += "+" + w.what
			continue
		}
		merged = append(merged, w)
	}
	out = append(out, merged...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].from < out[j].from })
	return out
}

// ---- detector output ----

// claim is a stretch a detector said "blocked" (needs attention).
type blockedClaim struct{ from, to time.Duration }

// change is a detector's verdict from a moment on.
type verdictChange struct {
	at      time.Duration
	blocked bool
}

// claimsFrom turns verdict changes into blocked stretches, the last one
// closed at end.
func claimsFrom(chs []verdictChange, end time.Duration) []blockedClaim {
	var out []blockedClaim
	on := false
	var from time.Duration
	for _, c := range chs {
		switch {
		case c.blocked && !on:
			on, from = true, c.at
		case !c.blocked && on:
			on = false
			out = append(out, blockedClaim{from, c.at})
		}
	}
	if on {
		out = append(out, blockedClaim{from, max(end, from)})
	}
	return out
}

// ---- scoring ----

// score is one detector's result over some recordings.
type detScore struct {
	prompts, missed int
	dropouts        int             // times it stopped saying blocked while a prompt was up
	early           []time.Duration // how long before the prompt was drawn it said blocked
	latency         []time.Duration
	persistence     []time.Duration
	alarms          map[string]int           // false-alarm episodes by true state
	alarmTime       map[string]time.Duration // and their time
	scored          time.Duration            // time inside known windows
	misses          []string                 // what was missed or alarmed, for the log
}

func newScore() *detScore {
	return &detScore{alarms: map[string]int{}, alarmTime: map[string]time.Duration{}}
}

func (s *detScore) add(o *detScore) {
	s.prompts += o.prompts
	s.missed += o.missed
	s.dropouts += o.dropouts
	s.latency = append(s.latency, o.latency...)
	s.early = append(s.early, o.early...)
	s.persistence = append(s.persistence, o.persistence...)
	for k, v := range o.alarms {
		s.alarms[k] += v
	}
	for k, v := range o.alarmTime {
		s.alarmTime[k] += v
	}
	s.scored += o.scored
	s.misses = append(s.misses, o.misses...)
}

func overlap(a0, a1, b0, b1 time.Duration) time.Duration {
	return max(0, min(a1, b1)-max(a0, b0))
}

// scoreClaims scores one detector on one recording.
//
// For each blocked window: latency is the first moment the detector said
// blocked within it minus its start (0 when it already did); missed when it
// never did. A drop-out is a claim on it that ended while it was still up
// (a flicker, or giving up early). Persistence is how long the claim covering the window's end
// went on after the prompt left the screen. A claim that touches no
// blocked window is a false alarm, counted once (under the true state it
// first overlaps) with its time split by the true states it overlaps; a
// claim that touches a blocked window is the detection of that prompt, and
// its tail is persistence, not an alarm. Time outside windows is unscored.
func scoreClaims(windows []truthWin, claims []blockedClaim) *detScore {
	s := newScore()
	earlyDone := map[int]bool{} // a claim is early at most once, for the first prompt it covers
	for _, w := range windows {
		s.scored += w.to - w.from
		if w.state != detect.StateBlocked {
			continue
		}
		s.prompts++
		found := false
		for ci, c := range claims {
			if c.from < w.to && c.to > w.from {
				s.latency = append(s.latency, max(0, c.from-w.from))
				if c.from < w.from && !earlyDone[ci] {
					s.early = append(s.early, w.from-c.from)
				}
				earlyDone[ci] = true
				found = true
				break
			}
		}
		if !found {
			s.missed++
			s.misses = append(s.misses, fmt.Sprintf("missed %s [%s, %s]", w.what, detMs(w.from), detMs(w.to)))
			continue
		}
		for _, c := range claims {
			if c.from < w.to && c.to > w.from && c.to < w.to {
				s.dropouts++
				s.misses = append(s.misses, fmt.Sprintf("stopped saying blocked at %s while %s was up [%s, %s]", detMs(c.to), w.what, detMs(w.from), detMs(w.to)))
			}
		}
		if w.open {
			continue
		}
		// Saying blocked into the next prompt is right there.
		until := time.Duration(math.MaxInt64)
		for _, n := range windows {
			if n.state == detect.StateBlocked && n.from >= w.to {
				until = min(until, n.from)
			}
		}
		p := time.Duration(0)
		for _, c := range claims {
			if c.from < w.to && c.to > w.to {
				p = max(0, min(c.to, until)-w.to)
			}
		}
		s.persistence = append(s.persistence, p)
		if p > 50*time.Millisecond {
			s.misses = append(s.misses, fmt.Sprintf("still blocked %s after %s left the screen at %s", detMs(p), w.what, detMs(w.to)))
		}
	}
	for _, c := range claims {
		prompt := false
		for _, w := range windows {
			if w.state == detect.StateBlocked && c.from < w.to && c.to > w.from {
				prompt = true
				break
			}
		}
		if prompt {
			continue
		}
		first := ""
		for _, w := range windows {
			if w.state == detect.StateBlocked {
				continue
			}
			o := overlap(c.from, c.to, w.from, w.to)
			if o == 0 && !(c.from == c.to && c.from >= w.from && c.from < w.to) {
				continue
			}
			s.alarmTime[w.state] += o
			if first == "" {
				first = w.state
				s.alarms[w.state]++
				s.misses = append(s.misses, fmt.Sprintf("false alarm during %s (%s) [%s, %s]", w.state, w.what, detMs(c.from), detMs(c.to)))
			}
		}
	}
	return s
}

func detMs(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }

// ---- the offline detectors ----

// screenDetector runs the same rules on the emulated screen, sampled every
// period of the write clock from the first write (period 0: after every
// write). Frames held in synchronized output are not sampled: the state
// stays as it was (a sampler that knew about ?2026; its best case).
func screenDetector(m *detect.Manifest, cols, rows int, writes [][]byte, at []time.Duration, period, end time.Duration) []verdictChange {
	t := term.New(term.Options{Cols: cols, Rows: rows})
	d := sessions.NewDecider(m)
	var chs []verdictChange
	last := false
	decide := func(now time.Duration) {
		if t.InSync() {
			return
		}
		b := d.Decide(t.Snapshot(), now).Name == sessions.Blocked
		if b != last {
			chs = append(chs, verdictChange{now, b})
			last = b
		}
	}
	if period == 0 {
		for i, w := range writes {
			t.Write(w)
			decide(at[i])
		}
		return chs
	}
	i := 0
	for now := at[0]; now <= end; now += period {
		fed := false
		for i < len(writes) && at[i] <= now {
			t.Write(writes[i])
			i++
			fed = true
		}
		if fed {
			decide(now)
		}
	}
	return chs
}

// tailDetector runs the same rules after every write on a pseudo-screen:
// the last 8 KB of output, escape sequences stripped, split into lines
// (long lines wrapped at the width) of which the last rows are the screen.
// Classifying on every write is this method's best case.
func tailDetector(m *detect.Manifest, cols, rows int, writes [][]byte, at []time.Duration) []verdictChange {
	const tail = 8 << 10
	d := sessions.NewDecider(m)
	var all []byte
	var chs []verdictChange
	last := false
	for i, w := range writes {
		all = append(all, w...)
		buf := all[max(0, len(all)-tail):]
		sc := pseudoScreen(stripEscapes(buf), cols, rows)
		b := d.Decide(sc, at[i]).Name == sessions.Blocked
		if b != last {
			chs = append(chs, verdictChange{at[i], b})
			last = b
		}
	}
	return chs
}

// stripEscapes removes escape sequences and control characters other
// than newline and tab, as strip-ansi style tools do.
func stripEscapes(b []byte) string {
	plain := term.StripEscapes(b)
	out := plain[:0]
	for _, c := range plain {
		if c >= 0x20 && c != 0x7f || c == '\n' || c == '\t' {
			out = append(out, c)
		}
	}
	return string(out)
}

func pseudoScreen(text string, cols, rows int) detect.Screen {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.ReplaceAll(l, "\t", " ")
		for utf8.RuneCountInString(l) > cols {
			r := []rune(l)
			lines = append(lines, string(r[:cols]))
			l = string(r[cols:])
		}
		lines = append(lines, l)
	}
	if len(lines) > rows {
		lines = lines[len(lines)-rows:]
	}
	for len(lines) < rows {
		lines = append(lines, "")
	}
	return detect.Screen{Cols: cols, Rows: rows, Lines: lines, CursorVisible: true}
}

// silenceDetector says blocked once no byte came for quiet, until the next.
func silenceDetector(at []time.Duration, quiet, end time.Duration) []blockedClaim {
	var out []blockedClaim
	for i := range at {
		next := end
		if i+1 < len(at) {
			next = at[i+1]
		}
		if next-at[i] > quiet {
			out = append(out, blockedClaim{at[i] + quiet, next})
		}
	}
	return out
}

// ---- the live run ----

type liveResult struct {
	rec    *sessionRec
	writes []time.Time // when each write began, from the replayer's log
	ends   []int       // the output offset after each write
	states []timedState
	err    error
}

func runDetectors(b *bench) (string, error) {
	recs, err := loadSessionRecs(b.root)
	if err != nil {
		return "", err
	}
	if len(recs) == 0 {
		return "", fmt.Errorf("no session recordings with seen offsets under fixtures/{%s}/*/sessions: re-record them with go run ./fixtures/record", strings.Join(detectorAgents, ","))
	}
	// Original timing: pauses are not capped (silence timers and sweeps
	// depend on them). -quick caps them and takes two recordings an agent.
	maxGap := time.Hour
	if b.quick {
		maxGap = 500 * time.Millisecond
		var some []*sessionRec
		per := map[string]int{}
		for _, r := range recs {
			if per[r.Agent] < 2 {
				some = append(some, r)
				per[r.Agent]++
			}
		}
		recs = some
	}
	rules, errs := detect.Load(nil, "")
	if len(errs) > 0 {
		return "", fmt.Errorf("load rules: %v", errs)
	}
	p, err := b.startAgentd()
	if err != nil {
		return "", err
	}
	defer p.close()

	// A few replays at a time: they mostly sleep through the recorded
	// pauses. Longest first, so the run ends sooner.
	const parallel = 4
	order := append([]*sessionRec(nil), recs...)
	sort.SliceStable(order, func(i, j int) bool { return detTotal(order[i].delays, maxGap) > detTotal(order[j].delays, maxGap) })
	results := make([]*liveResult, len(order))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, r := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = b.replayLive(p, r, maxGap, time.Second)
		}()
	}
	wg.Wait()

	byDet := make([]*detScore, len(detectorNames))
	byAgent := map[string][]*detScore{}
	for i := range byDet {
		byDet[i] = newScore()
	}
	var blockedEvidence, blockedTotal, answerGap int
	sort.Slice(results, func(i, j int) bool { return results[i].rec.path < results[j].rec.path })
	for _, res := range results {
		if res.err != nil {
			return "", fmt.Errorf("%s: %w", res.rec.name, res.err)
		}
		r := res.rec
		m, ok := rules.Lookup(r.Agent)
		if !ok {
			return "", fmt.Errorf("no rules for %s", r.Agent)
		}
		origin := res.writes[0]
		at := make([]time.Duration, len(res.writes))
		for i, w := range res.writes {
			at[i] = w.Sub(origin)
		}
		end := at[len(at)-1]
		offT := func(off int) time.Duration {
			i := sort.SearchInts(res.ends, off)
			return at[min(i, len(at)-1)]
		}
		// recAt: when each write came in the recording.
		recAt := make([]time.Duration, len(r.delays))
		var sum time.Duration
		for i, d := range r.delays {
			sum += d
			recAt[i] = sum
		}
		// actT places a driver action, taken after off bytes at sec seconds
		// of the recording, between the replay's writes around it.
		actT := func(off int, sec float64) time.Duration {
			i := min(sort.SearchInts(res.ends, off), len(at)-1)
			if off == 0 {
				return at[0]
			}
			extra := max(0, time.Duration(sec*float64(time.Second))-recAt[i])
			if i+1 < len(at) {
				extra = min(extra, at[i+1]-at[i])
			}
			return at[i] + extra
		}
		// nextT: when the first write after off bytes came.
		nextT := func(off int) time.Duration {
			return at[min(sort.SearchInts(res.ends, off+1), len(at)-1)]
		}
		windows := truthWindows(r.Labels, r.Timeline, offT, actT, nextT, end)
		if os.Getenv("AGENTD_BENCH_DEBUG") != "" {
			for _, w := range windows {
				b.logf("detectors: %s window %s %s [%s, %s] open=%v", r.name, w.state, w.what, detMs(w.from), detMs(w.to), w.open)
			}
			b.logf("detectors: %s agentd: %s", r.name, describeStates(res.states, origin))
		}
		for _, l := range r.Labels {
			if l.State == detect.StateBlocked {
				blockedTotal++
				if l.SeenFrom == "wait" {
					blockedEvidence++
				}
				if l.GoneOffset != nil && l.AnswerOffset != nil && l.AnswerSeconds != nil && offT(*l.GoneOffset)-actT(*l.AnswerOffset, *l.AnswerSeconds) > 2*time.Second {
					answerGap++
					b.logf("detectors: %s %s: the prompt left the screen %s after the answer", r.name, l.Capture, offT(*l.GoneOffset)-actT(*l.AnswerOffset, *l.AnswerSeconds))
				}
			}
		}
		// agentd's own notifications.
		var live []verdictChange
		for _, s := range res.states {
			if s.State == "exited" {
				break
			}
			live = append(live, verdictChange{s.At.Sub(origin), s.State == sessions.Blocked})
		}
		claimEnd := end + time.Second
		claims := [][]blockedClaim{
			claimsFrom(live, claimEnd),
			claimsFrom(screenDetector(m, r.Cols, r.Rows, r.writes, at, 700*time.Millisecond, claimEnd), claimEnd),
			claimsFrom(screenDetector(m, r.Cols, r.Rows, r.writes, at, 50*time.Millisecond, claimEnd), claimEnd),
			claimsFrom(tailDetector(m, r.Cols, r.Rows, r.writes, at), claimEnd),
			silenceDetector(at, 1*time.Second, end),
			silenceDetector(at, 3*time.Second, end),
			silenceDetector(at, 5*time.Second, end),
		}
		if byAgent[r.Agent] == nil {
			for range detectorNames {
				byAgent[r.Agent] = append(byAgent[r.Agent], newScore())
			}
		}
		for d, cs := range claims {
			s := scoreClaims(windows, cs)
			if d == 0 {
				for _, x := range s.misses {
					b.logf("detectors: agentd %s: %s; its states: %s", r.name, x, describeStates(res.states, origin))
				}
			}
			byDet[d].add(s)
			byAgent[r.Agent][d].add(s)
		}
	}
	return detectorTables(byDet, byAgent, len(results), blockedEvidence, blockedTotal, answerGap, maxGap), nil
}

func detTotal(ds []time.Duration, maxGap time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += min(d, maxGap)
	}
	return t
}

func describeStates(ss []timedState, origin time.Time) string {
	var parts []string
	for _, s := range ss {
		parts = append(parts, fmt.Sprintf("%s@%s(%s)", s.State, detMs(s.At.Sub(origin)), s.Reason))
	}
	return strings.Join(parts, " ")
}

// replayLive plays one recording through agentd, pauses capped at maxGap
// and the replayer staying hold after its last write, and returns its
// notifications and the replayer's write log.
func (b *bench) replayLive(p *agentdProc, r *sessionRec, maxGap, hold time.Duration) *liveResult {
	res := &liveResult{rec: r}
	dir, err := os.MkdirTemp(b.tmp, "replay-")
	if err != nil {
		res.err = err
		return res
	}
	logPath := filepath.Join(dir, "writes.log")
	id, err := p.spawn(map[string]any{
		"argv": []string{b.replay, "-raw", r.base() + ".raw", "-timing", r.base() + ".timing", "-log", logPath,
			"-maxgap", maxGap.String(), "-hold", hold.String()},
		"cwd": dir, "cols": r.Cols, "rows": r.Rows, "agent": r.Agent, "hooks": false,
	})
	if err != nil {
		res.err = err
		return res
	}
	if err := p.waitState(id, "exited", detTotal(r.delays, maxGap)+2*time.Minute); err != nil {
		res.err = err
		return res
	}
	res.states = p.states(id)
	if res.writes, res.ends, err = recording.ReadWriteLog(logPath); err != nil {
		res.err = err
		return res
	}
	if len(res.writes) != len(r.writes) {
		res.err = fmt.Errorf("the replayer logged %d writes of %d", len(res.writes), len(r.writes))
	}
	return res
}

// ---- the tables ----

func detMark(ok bool) string {
	if ok {
		return " ✅"
	}
	return " ❌"
}

func detMedian(ds []time.Duration) (time.Duration, bool) {
	if len(ds) == 0 {
		return 0, false
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], true
}

func detMax(ds []time.Duration) (time.Duration, bool) {
	if len(ds) == 0 {
		return 0, false
	}
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m, true
}

// fmtDur prints a duration in ms below 10 s, in s above.
func detDur(d time.Duration, ok bool) string {
	if !ok {
		return "—"
	}
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

var alarmStates = []string{detect.StateWorking, detect.StateIdle, detect.StateDone, detect.StateError}

func alarmCell(s *detScore, state string) string {
	if state == "" {
		n, t := 0, time.Duration(0)
		for _, st := range alarmStates {
			n += s.alarms[st]
			t += s.alarmTime[st]
		}
		return fmt.Sprintf("%d / %.1f s", n, t.Seconds())
	}
	return fmt.Sprintf("%d / %.1f s", s.alarms[state], s.alarmTime[state].Seconds())
}

func totalAlarms(s *detScore) (int, time.Duration) {
	n, t := 0, time.Duration(0)
	for _, st := range alarmStates {
		n += s.alarms[st]
		t += s.alarmTime[st]
	}
	return n, t
}

func detectorTables(byDet []*detScore, byAgent map[string][]*detScore, recordings, blockedEvidence, blockedTotal, answerGap int, maxGap time.Duration) string {
	var sb strings.Builder
	a := byDet[0]
	medLat, okMed := detMedian(a.latency)
	maxLat, okMax := detMax(a.latency)
	maxPer, okPer := detMax(a.persistence)
	nA, _ := totalAlarms(a)
	timing := "original timing"
	if maxGap < time.Hour {
		timing = "pauses capped at " + maxGap.String() + " (-quick: not numbers to publish)"
	}
	fmt.Fprintf(&sb, "%d session recordings (%s), %d prompts (%d with the recorder's wait as first-seen evidence), %.0f s of known state scored.\n\n",
		recordings, timing, a.prompts, blockedEvidence, a.scored.Seconds())
	sb.WriteString("| detector | prompts missed | median latency | max latency | drop-outs | median persistence | max persistence | false alarms, working | idle | done | error | all (episodes / s) |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, s := range byDet {
		med, okm := detMedian(s.latency)
		mx, okx := detMax(s.latency)
		pm, okpm := detMedian(s.persistence)
		px, okpx := detMax(s.persistence)
		cells := []string{
			fmt.Sprintf("%d of %d", s.missed, s.prompts),
			detDur(med, okm), detDur(mx, okx), strconv.Itoa(s.dropouts), detDur(pm, okpm), detDur(px, okpx),
		}
		for _, st := range alarmStates {
			cells = append(cells, alarmCell(s, st))
		}
		cells = append(cells, alarmCell(s, ""))
		if i == 0 {
			cells[0] += detMark(s.missed == 0)
			cells[1] += detMark(okMed && medLat <= 10*time.Millisecond)
			cells[2] += detMark(okMax && maxLat <= 40*time.Millisecond)
			cells[5] += detMark(okPer && maxPer <= 50*time.Millisecond)
			cells[len(cells)-1] += detMark(nA == 0)
		}
		fmt.Fprintf(&sb, "| %s | %s |\n", detectorNames[i], strings.Join(cells, " | "))
	}
	// Better than every other row on every column.
	var worse []string
	for i, s := range byDet[1:] {
		name := detectorNames[i+1]
		med, _ := detMedian(s.latency)
		mx, _ := detMax(s.latency)
		px, _ := detMax(s.persistence)
		n, t := totalAlarms(s)
		_, tA := totalAlarms(a)
		if s.missed < a.missed {
			worse = append(worse, name+" misses fewer prompts")
		}
		if s.dropouts < a.dropouts {
			worse = append(worse, name+" drops out less")
		}
		if len(s.latency) > 0 && med < medLat {
			worse = append(worse, name+" has a lower median latency")
		}
		if len(s.latency) > 0 && mx < maxLat {
			worse = append(worse, name+" has a lower max latency")
		}
		if len(s.persistence) > 0 && px < maxPer {
			worse = append(worse, name+" has a lower max persistence")
		}
		if n < nA || t < tA {
			worse = append(worse, name+" has fewer false alarms")
		}
	}
	sb.WriteString("\n")
	if len(worse) == 0 {
		sb.WriteString("agentd is ahead of or level with every other row on every column ✅ (lower is better; 0 and 0 tie).\n")
	} else {
		sb.WriteString("agentd is not ahead on every column ❌: " + strings.Join(worse, "; ") + ".\n")
	}
	if len(a.early) > 0 {
		med, _ := detMedian(a.early)
		mx, _ := detMax(a.early)
		fmt.Fprintf(&sb, "\nOn %d prompts agentd said blocked before the prompt was drawn (median %s, max %s earlier; counted as 0 latency): the agent's own OSC 7501 report comes first.\n", len(a.early), detDur(med, true), detDur(mx, true))
	}
	if answerGap > 0 {
		fmt.Fprintf(&sb, "\n%d prompts left the screen more than 2 s after the answering key (see the log).\n", answerGap)
	}
	if blockedTotal > blockedEvidence {
		fmt.Fprintf(&sb, "\n%d prompt labels had no wait as evidence; their windows start at the capture.\n", blockedTotal-blockedEvidence)
	}

	sb.WriteString("\nBy agent: prompts missed, median / max latency, false-alarm episodes / s.\n\n")
	sb.WriteString("| agent | prompts | " + strings.Join(detectorNames, " | ") + " |\n")
	sb.WriteString("|---|---|" + strings.Repeat("---|", len(detectorNames)) + "\n")
	for _, ag := range detectorAgents {
		ss := byAgent[ag]
		if ss == nil {
			continue
		}
		cells := []string{ag, strconv.Itoa(ss[0].prompts)}
		for _, s := range ss {
			med, okm := detMedian(s.latency)
			mx, okx := detMax(s.latency)
			n, t := totalAlarms(s)
			cells = append(cells, fmt.Sprintf("%d missed; %s / %s; %d / %.1f s", s.missed, detDur(med, okm), detDur(mx, okx), n, t.Seconds()))
		}
		sb.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return sb.String()
}

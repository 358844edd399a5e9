package detect_test

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions/term"
)

// BenchmarkClassify classifies one real 120x40 screen per agent and state:
// the cost agentd pays each time a screen changes.
func BenchmarkClassify(b *testing.B) {
	set := loadSet(b)
	picked := map[string]capture{}
	for _, c := range loadCorpus(b) {
		if c.misdetected || c.Cols != 120 || c.Rows != 40 {
			continue
		}
		key := c.Agent + "/" + c.State
		if old, ok := picked[key]; !ok || c.Path < old.Path {
			picked[key] = c
		}
	}
	keys := make([]string, 0, len(picked))
	for k := range picked {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := picked[k]
		m, _ := set.Lookup(c.Agent)
		sc := c.screen(b)
		b.Run(k, func(b *testing.B) {
			b.ReportAllocs()
			var v detect.Verdict
			for b.Loop() {
				v = m.Classify(sc)
			}
			if v.State != c.State {
				b.Fatalf("%s classified %s, want %s", c.Path, v.State, c.State)
			}
		})
	}
}

// BenchmarkIdentify names the agent from a screen, as classify does
// without --agent.
func BenchmarkIdentify(b *testing.B) {
	set := loadSet(b)
	for _, c := range loadCorpus(b) {
		if c.State != detect.StateBlocked || c.misdetected {
			continue
		}
		sc := c.screen(b)
		b.Run(c.Agent, func(b *testing.B) {
			for b.Loop() {
				set.Identify(sc)
			}
		})
		return
	}
}

// streamScreens renders every recorded session write by write (as the
// agent wrote it, per its .timing) and returns each session's agent and
// the screens after its writes that differ from the one before: the
// screens a live session classifies.
func streamScreens(tb testing.TB) (agents []string, screens [][]detect.Screen) {
	files, _ := filepath.Glob("../fixtures/*/*/sessions/*.raw")
	if len(files) == 0 {
		tb.Skip("no session recordings under fixtures/")
	}
	for _, f := range files {
		writes, _, err := recording.Read(f, strings.TrimSuffix(f, ".raw")+".timing")
		if err != nil {
			tb.Fatal(err)
		}
		t := term.New(term.Options{Cols: 120, Rows: 40})
		var ss []detect.Screen
		for _, w := range writes {
			t.Write(w)
			s := t.Snapshot()
			if n := len(ss); n > 0 && slices.Equal(ss[n-1].Lines, s.Lines) && ss[n-1].Title == s.Title {
				continue // the session reuses its last verdict for this one (sessions/verdictcache.go)
			}
			ss = append(ss, s)
		}
		agents = append(agents, filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(f)))))
		screens = append(screens, ss)
	}
	return agents, screens
}

// BenchmarkClassifyStream classifies every recorded session's screens in
// order, write by write, as a live session does (screens equal to the one
// before left out: the session reuses its verdict for those). It reports
// µs per screen.
func BenchmarkClassifyStream(b *testing.B) {
	rules, _ := detect.Load(nil, "")
	agents, screens := streamScreens(b)
	n := 0
	for _, ss := range screens {
		n += len(ss)
	}
	for b.Loop() {
		for i, ss := range screens {
			if m, ok := rules.Lookup(agents[i]); ok {
				for _, s := range ss {
					m.Classify(s)
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/screen")
}

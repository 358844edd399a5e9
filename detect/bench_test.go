package detect_test

import (
	"sort"
	"testing"

	"github.com/agentd/agentd/detect"
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

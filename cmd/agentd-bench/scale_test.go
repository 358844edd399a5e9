package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

func TestProcReadings(t *testing.T) {
	if _, _, err := procCPUTicks(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	rss, err := procRSSKB(os.Getpid())
	if err != nil || rss <= 0 {
		t.Fatalf("rss %d, %v", rss, err)
	}
}

func TestQuantile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i))
	}
	if quantile(ds, 0.5) != 50 || quantile(ds, 0.99) != 99 || quantile(ds, 0) != 1 {
		t.Fatalf("p50 %d p99 %d", quantile(ds, 0.5), quantile(ds, 0.99))
	}
}

// Every run feeds the same bytes, to agentd and to xterm alike.
func TestInputs(t *testing.T) {
	a, b := randomText(1<<16), randomText(1<<16)
	if !bytes.Equal(a, b) || len(a) < 1<<16 {
		t.Fatal("randomText is not repeatable")
	}
	for _, c := range a {
		if c < ' ' && c != '\r' && c != '\n' && c != 0x1b {
			t.Fatalf("control byte %#x in random text", c)
		}
	}
	if r := repeatTo([]byte("abc"), 10); len(r) != 12 {
		t.Fatalf("repeatTo: %d bytes", len(r))
	}
}

func TestFeedAndRecordings(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{root: root}
	recs, err := b.benchRecordings()
	if err != nil {
		t.Skip(err)
	}
	ws, gaps, err := recs[0].writes(loopMaxGap)
	if err != nil || len(ws) == 0 || len(ws) != len(gaps) {
		t.Fatalf("%s: %d writes, %d gaps, %v", recs[0].Name, len(ws), len(gaps), err)
	}
	for _, g := range gaps {
		if g > loopMaxGap {
			t.Fatalf("gap %s over the cap", g)
		}
	}
	rules, _ := detect.Load(nil, "")
	m, ok := rules.Lookup(recs[0].Agent)
	if !ok {
		t.Fatalf("no rules for %s", recs[0].Agent)
	}
	raw, _ := os.ReadFile(recs[0].Raw)
	for _, every := range []time.Duration{0, -1, liveEvery} {
		if d := feedTerm(raw, m, every); d <= 0 {
			t.Fatalf("feedTerm took %s", d)
		}
	}
	q, err := pickQuiet(recs, time.Second)
	if err != nil || len(q) == 0 || len(q[0].want) == 0 {
		t.Fatalf("pickQuiet: %d, %v", len(q), err)
	}
}

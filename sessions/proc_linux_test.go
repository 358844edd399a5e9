package sessions

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// One walk of /proc answers every session: this process's own terminal
// session is among them, and its time grows as it works once the walk is
// older than cpuFresh, read at the new walk's time.
func TestSessionCPUFromOneWalk(t *testing.T) {
	sid, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	before, at, ok := sessionCPU(sid)
	if !ok {
		t.Fatalf("session %d (this test's) not found in /proc", sid)
	}
	deadline := time.Now().Add(60 * time.Second)
	for x := 0; ; x++ {
		if now, nowAt, _ := sessionCPU(sid); now > before {
			if !nowAt.After(at) {
				t.Errorf("the CPU time grew from %v to %v, but its walk's time stayed %v", before, now, at)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %d's CPU time stayed %v over 60 s of this test spinning", sid, before)
		}
		for i := 0; i < 1e6; i++ {
			x ^= i
		}
	}
	p, ok := parseStat("12 (a (b) c) S 1 13 34 0 -1 0 0 0 0 0 5 6 7 8")
	if want := (procEntry{ppid: 1, pgrp: 13, sid: 34, ticks: 26}); !ok || p != want {
		t.Errorf("parseStat of a name with spaces and parentheses: %+v, %v; want %+v", p, ok, want)
	}
}

// BenchmarkProcTable is one walk of the process table (readProcTable), as
// a session's CPU reading takes it; it reports the cost per process.
func BenchmarkProcTable(b *testing.B) {
	procs := 0
	for b.Loop() {
		procs = len(readProcTable())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(max(procs, 1))/1e3, "µs/process")
	b.ReportMetric(float64(procs), "processes")
}

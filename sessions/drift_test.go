package sessions

import (
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

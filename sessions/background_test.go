package sessions

import (
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions/term"
)

// A Stop hook ends Claude Code's foreground turn, not the work it started:
// played on the recorded session of a turn that waits on a background
// agent, a Stop that names no background task (older Claude Code sends
// none), reported as "Waiting for 1 background agent to finish" shows,
// leaves the session working while the agent runs, and after it. What
// ends it is the turn's own end: Claude's OSC 7501 done or the completion
// line, never that Stop.
func TestStopWhileABackgroundAgentRunsIsNotDone(t *testing.T) {
	rules, errs := detect.Load(nil, "")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	m, _ := rules.Lookup("claude")
	base := "../fixtures/claude/2.1.332/sessions/background-agent"
	writes, _, err := recording.Read(base+".raw", base+".timing")
	if err != nil {
		t.Fatal(err)
	}
	vt := term.New(term.Options{Cols: 120, Rows: 40})
	d := NewDecider(m)
	stopped, tasked := false, false
	var trail []string
	for i, w := range writes {
		vt.Write(w)
		sc := vt.Snapshot()
		at := time.Duration(i) * time.Millisecond
		v := m.Classify(sc)
		if v.Background && !stopped {
			stopped = true
			d.machine.reported(report{source: SourceHook, reason: "hook.Stop", rec: &detect.StatusRecord{State: "done"}}, d.start.Add(at))
		}
		st := d.Decide(sc, at)
		if st.Name == Idle && !tasked {
			d.machine.tasked() // the recorder types the task once Claude is ready
			tasked = true
		}
		if len(trail) == 0 || trail[len(trail)-1] != st.Name+"("+st.Reason+")" {
			trail = append(trail, st.Name+"("+st.Reason+")")
		}
		if st.Name == Done && st.Reason == "hook.Stop" {
			t.Fatalf("write %d: done (hook.Stop) once the turn waited on its background agent; states %s; screen:\n%s", i, strings.Join(trail, " → "), sc.Text())
		}
		if v.Background && st.Name != Working {
			t.Fatalf("write %d: %s (%s) while the screen shows the background agent running, want working; states %s", i, st.Name, st.Reason, strings.Join(trail, " → "))
		}
	}
	if !stopped {
		t.Fatal("the recording never showed the background agent running")
	}
	if last := trail[len(trail)-1]; !strings.HasPrefix(last, Done+"(") {
		t.Fatalf("the session ended %s, want done; states %s", last, strings.Join(trail, " → "))
	}
	t.Logf("states: %s", strings.Join(trail, " → "))
}

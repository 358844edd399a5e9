package sessions

import (
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// The generic reader does not know an agent's whole frame: an error row
// drawn before the retry row under it reads like a turn that ended on an
// error. A session takes the generic reader's blocked or error only once
// the screen has held it still for genericHold, and asks to look again
// then; the agent's own rules count at once.
func TestGenericVerdictWaitsForAStillScreen(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := newMachine(State{Agent: "x", Name: Working, Source: SourceScreen, Reason: "x.spinner", Since: t0})
	errV := detect.Verdict{Agent: "x", State: detect.StateError, Reason: detect.ReasonGenericError, Message: "Error: 500 the model is down"}
	step := func(v detect.Verdict, at time.Duration) (State, time.Duration) {
		st, _, again := m.step(facts{rules: knowsIdleRules, agent: "x", screen: v, now: t0.Add(at)})
		return st, again
	}
	st, again := step(errV, 0)
	if st.Name != Working || again != genericHold {
		t.Fatalf("a generic error just drawn: state %s, look again in %v; want working, again in %v", st.Name, again, genericHold)
	}
	// The frame goes on: a retry row under the error.
	if st, _ = step(workingV, 100*time.Millisecond); st.Name != Working {
		t.Fatalf("the retry row drawn: state %s, want working", st.Name)
	}
	// The error again, then a different one: each starts the hold anew.
	step(errV, 200*time.Millisecond)
	other := errV
	other.Message = "Error: 429 rate limited"
	if st, again = step(other, 600*time.Millisecond); st.Name != Working || again != genericHold {
		t.Fatalf("another generic error: state %s, again in %v; want working, again in %v", st.Name, again, genericHold)
	}
	if st, again = step(other, 600*time.Millisecond+genericHold/2); st.Name != Working || again != genericHold/2 {
		t.Fatalf("half the hold: state %s, again in %v; want working, again in %v", st.Name, again, genericHold/2)
	}
	if st, _ = step(other, 600*time.Millisecond+genericHold); st.Name != Error || st.Reason != detect.ReasonGenericError {
		t.Fatalf("held still for %v: state %s (%s), want error (%s)", genericHold, st.Name, st.Reason, detect.ReasonGenericError)
	}
}

// A generic menu counts once held, as an error does; a retry (working) and
// the agent's own rules count at once.
func TestGenericMenuHeldThenBlocked(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := newMachine(State{Agent: "x", Name: Idle, Source: SourceScreen, Reason: "x.composer", Since: t0})
	menu := detect.Verdict{Agent: "x", State: detect.StateBlocked, Reason: detect.ReasonGenericMenu,
		Prompt: &detect.Prompt{Kind: "question", Question: "Choose a backend:", Content: "c1",
			Options: []detect.Option{{ID: "1", Label: "Cloud", Keys: "\r", Selected: true}, {ID: "2", Label: "Local", Keys: "\x1b[B\r"}}}}
	st, _, _ := m.step(facts{rules: knowsIdleRules, agent: "x", screen: menu, now: t0})
	if st.Name != Idle {
		t.Fatalf("a generic menu just drawn: %s, want idle until it holds", st.Name)
	}
	st, _, _ = m.step(facts{rules: knowsIdleRules, agent: "x", screen: menu, now: t0.Add(genericHold)})
	if st.Name != Blocked || st.Prompt == nil || len(st.Prompt.Options) != 2 {
		t.Fatalf("a generic menu held %v: %s %+v, want blocked with its two options", genericHold, st.Name, st.Prompt)
	}
	retry := detect.Verdict{Agent: "x", State: detect.StateWorking, Reason: detect.ReasonGenericRetry}
	if st, _, _ = m.step(facts{rules: knowsIdleRules, agent: "x", screen: retry, now: t0.Add(2 * genericHold)}); st.Name != Working {
		t.Fatalf("a retry counting down: %s, want working at once", st.Name)
	}
	if st, _, _ = m.step(facts{rules: knowsIdleRules, agent: "x", screen: doneV, now: t0.Add(2*genericHold + time.Millisecond)}); st.Name != Done {
		t.Fatalf("the agent's own done: %s, want done at once", st.Name)
	}
}

// A menu no rule knows, drawn by a real program in a PTY that takes its
// keys one at a time (fakeMenuAgent): the generic reader reads it blocked
// once it has held still, with its options, and an answer moves the
// selection an arrow at a time and chooses it with Enter.
func TestGenericMenuOfAProgramNoRuleKnows(t *testing.T) {
	s := spawnMenuAgent(t, "bare", `name = "bare"
[identify]
argv = ["AGENTD_TEST_MENU_AGENT"]
`)
	st := awaitState(t, s, Blocked)
	if st.Reason != detect.ReasonGenericMenu || st.Prompt == nil || st.Prompt.Question != "Allow this?" || !st.Prompt.Stepped {
		t.Fatalf("blocked for %s with %+v, want the generic reader's stepped menu asking \"Allow this?\"", st.Reason, st.Prompt)
	}
	var labels []string
	for _, o := range st.Prompt.Options {
		labels = append(labels, o.Label)
	}
	if strings.Join(labels, "|") != "Yes|Yes, always|No" {
		t.Fatalf("options %q, want Yes, Yes, always, No", labels)
	}
	after, err := s.Answer(st.Prompt.ID, "3", "")
	if err != nil {
		t.Fatalf("answer No: %v", err)
	}
	if after.Name == Blocked {
		t.Fatalf("still blocked after answering No: %+v\n%s", after, ptyOf(s).term.Snapshot().Text())
	}
	awaitScreen(t, s, "chose No")
}

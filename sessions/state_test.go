package sessions

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/detect"
)

func TestDecide(t *testing.T) {
	working := detect.Verdict{Agent: "x", State: detect.StateWorking, Reason: "x.spinner"}
	idle := detect.Verdict{Agent: "x", State: detect.StateIdle, Reason: "x.no_rule"}
	done := detect.Verdict{Agent: "x", State: detect.StateDone, Outcome: "completed", Reason: "x.turn_done"}
	blocked := detect.Verdict{Agent: "x", State: detect.StateBlocked, Reason: "x.menu", Prompt: &detect.Prompt{ID: "p1", Options: []detect.Option{{ID: "1", Label: "Yes"}}}}
	rec := func(state string) *report {
		return &report{source: SourceOSC, rec: &detect.StatusRecord{State: state, App: "x", Kind: "permission", Message: "approve Bash"}}
	}
	cur := func(name string) State { return State{Name: name} }
	tests := []struct {
		name        string
		e           evidence
		want        string
		wantSource  string
		wantOutcome string
	}{
		{"screen blocker beats a report", evidence{screen: blocked, report: rec("working"), current: cur(Working)}, Blocked, SourceScreen, ""},
		{"report beats other screen rules", evidence{screen: idle, report: rec("working"), current: cur(Idle)}, Working, SourceOSC, ""},
		{"blocked report without a readable prompt", evidence{screen: working, report: rec("blocked"), current: cur(Working)}, Blocked, SourceOSC, ""},
		{"an auth report without a prompt on screen is a login to fix", evidence{screen: working, report: &report{source: SourceOSC, rec: &detect.StatusRecord{State: "blocked", Kind: "auth", Message: "Not logged in · Please run /login"}}, current: cur(Working)}, Error, SourceOSC, ""},
		{"an auth prompt on screen is blocked", evidence{screen: blocked, report: &report{source: SourceOSC, rec: &detect.StatusRecord{State: "blocked", Kind: "auth"}}, current: cur(Working)}, Blocked, SourceScreen, ""},
		{"unknown report state is ignored", evidence{screen: working, report: &report{source: SourceOSC, rec: &detect.StatusRecord{State: "dancing"}}, current: cur(Idle)}, Working, SourceScreen, ""},
		{"completion line is done", evidence{screen: done, current: cur(Working)}, Done, SourceScreen, "completed"},
		{"seen done is idle", evidence{screen: done, current: cur(Done), seen: true}, Idle, SourceScreen, ""},
		{"a turn that ended without a completion line", evidence{screen: idle, current: cur(Working), task: true}, Done, SourceScreen, "unknown"},
		{"a prompt answered before any task (folder trust) leaves the agent idle", evidence{screen: detect.Verdict{State: detect.StateIdle, Reason: "x.composer"}, current: State{Name: Blocked, Source: SourceScreen, Prompt: &detect.Prompt{Kind: "trust"}}, knowsIdle: true}, Idle, SourceScreen, ""},
		{"a prompt answered in a task, back at the composer, ends the turn", evidence{screen: detect.Verdict{State: detect.StateIdle, Reason: "x.composer"}, current: State{Name: Blocked, Source: SourceScreen}, task: true, knowsIdle: true}, Done, SourceScreen, "unknown"},
		{"start-up settling is not a turn", evidence{screen: idle, current: cur(Working)}, Idle, SourceScreen, ""},
		{"a half-drawn start-up screen is not idle", evidence{screen: idle, current: State{Name: Working, Source: SourceProcess}, starting: true}, Working, SourceProcess, ""},
		{"a composer the agent does not read yet (line mode) is not idle", evidence{screen: detect.Verdict{State: detect.StateIdle, Reason: "x.composer"}, current: State{Name: Working, Source: SourceProcess}, knowsIdle: true, lineMode: true}, Working, SourceProcess, ""},
		{"a recognised ready screen ends start-up", evidence{screen: detect.Verdict{State: detect.StateIdle, Reason: "x.composer"}, current: cur(Working), starting: true}, Idle, SourceScreen, ""},
		{"an idle report keeps an unseen done", evidence{screen: idle, report: rec("idle"), current: State{Name: Done, Outcome: "completed"}, task: true}, Done, "", "completed"},
		{"an idle report keeps the screen's turn end", evidence{screen: detect.Verdict{State: detect.StateDone, Outcome: "interrupted", Reason: "x.interrupted"}, report: rec("idle"), current: cur(Working), task: true}, Done, SourceScreen, "interrupted"},
		{"a screen no rule reads mid-turn, where the rules know the ready screen, keeps working", evidence{screen: idle, current: State{Name: Working, Source: SourceScreen}, task: true, knowsIdle: true}, Working, SourceScreen, ""},
		{"a screen no rule reads right after a prompt, where the rules know the ready screen, is the turn going on", evidence{screen: idle, current: State{Name: Blocked, Source: SourceScreen}, task: true, knowsIdle: true}, Working, SourceScreen, ""},
		{"the ready screen after a turn is its end", evidence{screen: detect.Verdict{State: detect.StateIdle, Reason: "x.composer"}, current: cur(Working), task: true, knowsIdle: true}, Done, SourceScreen, "unknown"},
		{"an error on screen stands over a Stop report", evidence{screen: detect.Verdict{State: detect.StateError, Reason: "x.api_error", Message: "API Error: 400"}, report: rec("done"), current: cur(Working), task: true}, Error, SourceScreen, ""},
		{"done report takes the screen's outcome", evidence{screen: detect.Verdict{State: detect.StateDone, Outcome: "interrupted"}, report: rec("done"), current: cur(Working)}, Done, SourceOSC, "interrupted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := decide(tc.e)
			if got.Name != tc.want || (tc.wantSource != "" && got.Source != tc.wantSource) || got.Outcome != tc.wantOutcome {
				t.Fatalf("decide = %s/%s/%s (%s), want %s/%s/%s", got.Name, got.Source, got.Outcome, got.Reason, tc.want, tc.wantSource, tc.wantOutcome)
			}
			if got.Name == Blocked && (got.Prompt == nil || got.Prompt.ID == "") {
				t.Fatalf("blocked without a prompt id: %+v", got.Prompt)
			}
		})
	}
}

func TestBlockedReportPromptIsStable(t *testing.T) {
	r := report{source: SourceHook, reason: "hook.PermissionRequest", rec: &detect.StatusRecord{State: "blocked", Kind: "permission", Message: "approve Bash: touch x"}}
	a, _ := fromReport(r, detect.Verdict{})
	b, _ := fromReport(r, detect.Verdict{State: detect.StateWorking})
	if a.Prompt.ID != b.Prompt.ID || a.Prompt.Question != "approve Bash: touch x" || !a.Prompt.Freeform {
		t.Fatalf("prompts %+v %+v", a.Prompt, b.Prompt)
	}
}

func TestPlainText(t *testing.T) {
	got := plainText([]byte("\x1b[1mbold\x1b[0m line\r\n\x1b]0;title\aok\x1b]8;;x\x1b\\link\r\n"))
	if got != "bold line\noklink\n" {
		t.Fatalf("plainText = %q", got)
	}
}

// Claude's Stop hook fires as a turn starts waiting on a background agent;
// its background_tasks say so, and that is working, not done. With the
// agent ended (or only other kinds of task left) Stop is done.
func TestStopWithBackgroundAgentIsWorking(t *testing.T) {
	for _, c := range []struct {
		tasks, want string
	}{
		{`[{"id":"a1","type":"subagent","status":"running","description":"Look up the weather"}]`, "working"},
		{`[{"id":"a1","type":"subagent","status":"completed"}]`, "done"},
		{`[]`, "done"},
	} {
		rec, ok, err := reportRecord(Report{Kind: "hook", Event: "Stop", Payload: []byte(`{"hook_event_name":"Stop","background_tasks":` + c.tasks + `}`)})
		if err != nil || !ok || rec.State != c.want {
			t.Errorf("Stop with background_tasks %s: %q ok=%v err=%v, want %s", c.tasks, rec.State, ok, err, c.want)
		}
	}
}

func TestSplitKeys(t *testing.T) {
	for keys, want := range map[string][]string{
		"\x1b[B\x1b[B\r":  {"\x1b[B", "\x1b[B", "\r"},
		"\x1b":            {"\x1b"},
		"1":               {"1"},
		"\x1bOA\x1b[1;5C": {"\x1bOA", "\x1b[1;5C"},
		"ja→\r":           {"j", "a", "→", "\r"},
	} {
		got := splitKeys(keys)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("splitKeys(%q) = %q, want %q", keys, got, want)
		}
	}
}

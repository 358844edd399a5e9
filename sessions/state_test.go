package sessions

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/detect"
)

func TestBlockedReportPromptIsStable(t *testing.T) {
	r := report{source: SourceHook, reason: "hook.PermissionRequest", rec: &detect.StatusRecord{State: "blocked", Kind: "permission", Message: "approve Bash: touch x"}}
	a, _ := fromReport(r, detect.Verdict{})
	b, _ := fromReport(r, detect.Verdict{State: detect.StateWorking})
	if a.Prompt.ID != b.Prompt.ID || a.Prompt.Question != "approve Bash: touch x" || !a.Prompt.Freeform {
		t.Fatalf("prompts %+v %+v", a.Prompt, b.Prompt)
	}
}

func TestPlainText(t *testing.T) {
	got := plainText([]byte("\x1b[1mbold\x1b[0m line\r\n\x1b]0;title\aok\x1b]8;;x\x1b\\link\r\nCRLF written\r\r\n"))
	if got != "bold line\noklink\nCRLF written\n" {
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
		{`[{"id":"a1","type":"subagent","status":"running","description":"Look up the weather"}]`, Working},
		{`[{"id":"a1","type":"subagent","status":"completed"}]`, Done},
		{`[]`, Done},
	} {
		rec, _, background, ok, err := reportRecord(Report{Kind: "hook", Event: "Stop", Payload: []byte(`{"hook_event_name":"Stop","background_tasks":` + c.tasks + `}`)}, "")
		if err != nil || !ok || rec.State != "done" {
			t.Fatalf("Stop with background_tasks %s: %+v ok=%v err=%v, want a done record", c.tasks, rec, ok, err)
		}
		st, _ := fromReport(report{source: SourceHook, reason: "hook.Stop", rec: &rec, background: background}, detect.Verdict{})
		if st.Name != c.want {
			t.Errorf("Stop with background_tasks %s: %s, want %s", c.tasks, st.Name, c.want)
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

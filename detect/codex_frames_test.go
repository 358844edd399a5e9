package detect_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions/term"
)

// codex149Frames plays each committed Codex 0.149.0 session recording
// write by write and calls f with the recording's name and the screen
// after each write; f returns false to stop that recording.
func codex149Frames(t *testing.T, f func(name string, s detect.Screen) bool) {
	t.Helper()
	raws, err := filepath.Glob(filepath.Join(fixtureRoot, "codex", "0.149.0", "sessions", "*.raw"))
	if err != nil || len(raws) == 0 {
		t.Fatalf("no codex 0.149.0 session recordings (%v)", err)
	}
	for _, raw := range raws {
		writes, _, err := recording.Read(raw, strings.TrimSuffix(raw, ".raw")+".timing")
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(raw), ".raw")
		opts := term.Options{Cols: 120, Rows: 40}
		if name == "narrow" {
			opts = term.Options{Cols: 80, Rows: 24}
		}
		vt := term.New(opts)
		for _, w := range writes {
			vt.Write(w)
			if !f(name, vt.Snapshot()) {
				break
			}
		}
	}
}

// Codex 0.149.0 draws its composer while it still loads its model ("│
// model:     loading" in the header box); an Enter typed then is lost and
// the task stays a draft. Every frame of its recorded sessions that shows
// that composer matches no rule, so agentd holds the session starting
// instead of reading it idle.
func TestCodexLoadingComposerIsNotReady(t *testing.T) {
	m, _ := loadSet(t).Lookup("codex")
	frames := 0
	codex149Frames(t, func(name string, s detect.Screen) bool {
		text := s.Text()
		if !strings.Contains(text, "│ model:     loading") {
			return !strings.Contains(text, "│ model:     fake-model")
		}
		if !strings.Contains(text, "› Ask Codex to do anything") {
			return true
		}
		frames++
		if v := m.Classify(s); !v.Unmatched() {
			t.Errorf("%s: a loading frame reads %s (%s); screen:\n%s", name, v.State, v.Reason, text)
			return false
		}
		return true
	})
	if frames == 0 {
		t.Fatal("no recorded frame shows the composer while the model loads")
	}
	t.Logf("%d loading frames match no rule", frames)
}

// 0.149.0 has no "Worked for" line: its finished turns read idle on the
// screen (known-misdetection/; agentd reads their end from the rollout
// log). Whatever rule comes to read them done must not read a session in
// which no turn completes done (completed) on any frame: not the refused
// command's "• Ran …" entry that stays above the composer for a moment
// before "■ Conversation interrupted" is drawn, nor the Plan mode notice
// "• Model changed to …", nor a start screen.
func TestCodexNoCompletedTurnWithoutAReply(t *testing.T) {
	m, _ := loadSet(t).Lookup("codex")
	noTurn := map[string]bool{"reject-exec": true, "interrupt": true, "interrupt-command": true,
		"error-400": true, "error-401": true, "error-500": true, "trust": true, "overlays": true, "update": true}
	played := map[string]int{}
	codex149Frames(t, func(name string, s detect.Screen) bool {
		if !noTurn[name] {
			return false
		}
		played[name]++
		if v := m.Classify(s); v.State == detect.StateDone && v.Outcome == "completed" {
			t.Errorf("%s: frame %d reads done (completed) by %s; screen:\n%s", name, played[name], v.Reason, s.Text())
			return false
		}
		return true
	})
	for name := range noTurn {
		if played[name] == 0 {
			t.Errorf("no recording %s played", name)
		}
	}
}

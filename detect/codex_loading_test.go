package detect_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions/term"
)

// Codex 0.149.0 draws its composer while it still loads its model ("│
// model:     loading" in the header box); an Enter typed then is lost and
// the task stays a draft. Played write by write, every frame of its
// recorded sessions that shows that composer matches no rule, so agentd
// holds the session starting instead of reading it idle.
func TestCodexLoadingComposerIsNotReady(t *testing.T) {
	set := loadSet(t)
	m, _ := set.Lookup("codex")
	raws, err := filepath.Glob(filepath.Join(fixtureRoot, "codex", "0.149.0", "sessions", "*.raw"))
	if err != nil || len(raws) == 0 {
		t.Fatalf("no codex 0.149.0 session recordings (%v)", err)
	}
	frames := 0
	for _, raw := range raws {
		writes, _, err := recording.Read(raw, strings.TrimSuffix(raw, ".raw")+".timing")
		if err != nil {
			t.Fatal(err)
		}
		vt := term.New(term.Options{Cols: 120, Rows: 40})
		if strings.Contains(raw, "narrow") {
			vt = term.New(term.Options{Cols: 80, Rows: 24})
		}
		for _, w := range writes {
			vt.Write(w)
			s := vt.Snapshot()
			text := s.Text()
			if !strings.Contains(text, "│ model:     loading") {
				if strings.Contains(text, "│ model:     fake-model") {
					break
				}
				continue
			}
			if !strings.Contains(text, "› Ask Codex to do anything") {
				continue
			}
			frames++
			if v := m.Classify(s); !v.Unmatched() {
				t.Errorf("%s: a loading frame reads %s (%s); screen:\n%s", filepath.Base(raw), v.State, v.Reason, text)
				break
			}
		}
	}
	if frames == 0 {
		t.Fatal("no recorded frame shows the composer while the model loads")
	}
	t.Logf("%d loading frames in %d recordings match no rule", frames, len(raws))
}

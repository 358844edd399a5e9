package detect_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions/term"
)

// Ink-based agents (Grok CLI, Auggie, Qwen Code, Letta Code) redraw their
// live area by erasing it and writing it again from the top. On a busy
// machine agentd can read such a frame half written: the transcript down to
// some row and nothing below it, no spinner and no composer. The last block
// of that half transcript may be the model's reply, or a tool's row whose
// result is not drawn yet, and a turn that is still running read done (CI
// saw "⏺ Bash(touch made.txt)" read as Grok's reply before the command
// ran). So a turn's end is read only on a whole frame, with the composer
// drawn below it.
//
// TestHalfDrawnFrameEndsNoTurn plays every recorded session write by write
// and cuts each write after the erasing it starts with and after every row
// it ends, as a PTY read can. (Cuts inside synchronized output count too:
// agentd reads a frame held there past syncHold, as a loaded machine's
// can be; Auggie's frame after a denied command is one.) Where the whole
// frames on either side of the write read working or blocked, no cut may
// read done or error by the agent's rules unless one of them does too.
func TestHalfDrawnFrameEndsNoTurn(t *testing.T) {
	set := loadSet(t)
	raws, err := filepath.Glob(filepath.Join(fixtureRoot, "*", "*", "sessions", "*.raw"))
	if err != nil || len(raws) == 0 {
		t.Fatalf("no session recordings (%v)", err)
	}
	var cuts atomic.Int64
	t.Run("sessions", func(t *testing.T) {
		for _, raw := range raws {
			base := strings.TrimSuffix(raw, ".raw")
			var sess recording.Session
			if b, err := os.ReadFile(base + ".json"); err != nil || json.Unmarshal(b, &sess) != nil || sess.Cols == 0 {
				continue // not a recorded session with its size
			}
			m, ok := set.Lookup(sess.Agent)
			if !ok {
				continue
			}
			t.Run(sess.Agent+"/"+sess.Version+"/"+filepath.Base(base), func(t *testing.T) {
				t.Parallel()
				writes, _, err := recording.Read(raw, base+".timing")
				if err != nil {
					t.Fatal(err)
				}
				cuts.Add(int64(checkHalfFrames(t, m, sess, writes)))
			})
		}
	})
	if cuts.Load() == 0 {
		t.Fatal("no write was cut")
	}
	t.Logf("%d half-written frames read", cuts.Load())
}

// checkHalfFrames plays writes and cuts them (see TestHalfDrawnFrameEndsNoTurn);
// it returns how many cuts it read.
func checkHalfFrames(t *testing.T, m *detect.Manifest, sess recording.Session, writes [][]byte) int {
	busy := func(state string) bool { return state == detect.StateWorking || state == detect.StateBlocked }
	ends := func(state string) bool { return state == detect.StateDone || state == detect.StateError }
	cuts := 0
	vt := term.New(term.Options{Cols: sess.Cols, Rows: sess.Rows})
	before := m.Classify(vt.Snapshot())
	for i, w := range writes {
		repaint := vt.Repaint(false)
		vt.Write(w)
		after := m.Classify(vt.Snapshot())
		if (busy(before.State) || busy(after.State)) && !ends(before.State) && !ends(after.State) {
			for _, j := range cutsOf(w) {
				// The screen before the write, then the write up to this cut.
				half := term.New(term.Options{Cols: sess.Cols, Rows: sess.Rows})
				half.Write(repaint)
				half.Write(w[:j])
				cuts++
				// The generic reader cannot know an agent's whole frame; a
				// session takes its verdict only once the screen has held it
				// still (sessions' genericHold, TestGenericVerdictWaitsForAStillScreen).
				if v := m.Classify(half.Snapshot()); ends(v.State) && !detect.GenericReader(v.Reason) {
					t.Errorf("write %d cut after byte %d of %d reads %s (%s) between %s (%s) and %s (%s); screen:\n%s",
						i, j, len(w), v.State, v.Reason, before.State, before.Reason, after.State, after.Reason, half.Snapshot().Text())
					break
				}
			}
		}
		before = after
	}
	return cuts
}

// cutsOf are the places a read may end inside write w that show a frame
// drawn in part: after the erasing and cursor moves it starts with (the
// old frame gone, nothing new yet), and after each row it ends.
func cutsOf(w []byte) []int {
	var cuts []int
	i := 0
	for i < len(w) && w[i] == 0x1b {
		j := i + 1
		if j < len(w) && w[j] == '[' {
			for j++; j < len(w) && (w[j] < 0x40 || w[j] > 0x7e); j++ {
			}
		}
		i = j + 1
	}
	if i > 0 && i < len(w) {
		cuts = append(cuts, i)
	}
	for j := i; j < len(w)-1; j++ {
		if w[j] == '\n' {
			cuts = append(cuts, j+1)
		}
	}
	return cuts
}

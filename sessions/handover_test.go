package sessions

import "testing"

// A handover checked as one snapshot goes ahead as another only when the
// check would judge both alike: what the sessions drew or decided meanwhile
// does not matter; a session started, ended or resized does.
func TestSameToCheck(t *testing.T) {
	base := func() *Snapshot {
		return &Snapshot{Version: SnapshotVersion, Sessions: []SessionSnapshot{
			{ID: "s1", Agent: "claude", BaseAgent: "claude", Pid: 10, FD: 7, Cols: 80, Rows: 24},
			{ID: "s2", Agent: "demo", BaseAgent: "demo", Pid: 11, FD: 8, Cols: 100, Rows: 30},
		}}
	}
	if b := base(); true {
		b.Sessions[0].Screen, b.Sessions[0].State, b.Sessions[1].Revision = []byte("new frame"), State{Name: Blocked}, 9
		if !SameToCheck(base(), b) {
			t.Errorf("a new screen and state make the check's answer stale; they should not")
		}
	}
	for name, change := range map[string]func(*Snapshot){
		"a session started": func(s *Snapshot) {
			s.Sessions = append(s.Sessions, SessionSnapshot{ID: "s3", Agent: "demo", BaseAgent: "demo", Pid: 12, FD: 9, Cols: 80, Rows: 24})
		},
		"a session ended":       func(s *Snapshot) { s.Sessions[1].Exited, s.Sessions[1].FD = &ExitStatus{}, -1 },
		"a session was resized": func(s *Snapshot) { s.Sessions[0].Cols = 120 },
		"another agent":         func(s *Snapshot) { s.Sessions[1].Agent = "claude" },
		"another format":        func(s *Snapshot) { s.Version++ },
	} {
		b := base()
		change(b)
		if SameToCheck(base(), b) {
			t.Errorf("%s: judged the same as before; the check must run again", name)
		}
	}
}

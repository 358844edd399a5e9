package sessions

import (
	"encoding/json"
	"testing"
)

// FuzzReport: no report on the socket crashes agentd's reading of it.
func FuzzReport(f *testing.F) {
	f.Add("hook", "PermissionRequest", []byte(`{"tool_name":"Bash","tool_input":{"command":"touch x"}}`))
	f.Add("hook", "Notification", []byte(`{"notification_type":"permission_prompt","message":"Claude needs your permission"}`))
	f.Add("signal", "needs-input", []byte(nil))
	f.Add("hook", "Stop", []byte(`[1,2`))
	f.Fuzz(func(t *testing.T, kind, event string, payload []byte) {
		rep := Report{Kind: kind, Event: event}
		if json.Valid(payload) {
			rep.Payload = payload
		}
		rec, _, _, ok, err := reportRecord(rep, "")
		if ok && err != nil {
			t.Fatalf("a report both taken and refused: %v", err)
		}
		if ok && rec.State == "" {
			t.Fatal("a report taken with no state")
		}
	})
}

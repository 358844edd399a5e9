package term

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/agentd/agentd/detect"
)

// statusStates are the OSC 7501 states agentd understands; a record with any
// other state is ignored, as the protocol asks.
var statusStates = map[string]bool{
	"idle": true, "working": true, "blocked": true, "done": true, "error": true, "clear": true,
}

// ParseStatus reads the body of an OSC 7501 record,
// `state=<s>:app=<name>[:kind=…][:msg=<base64>][:progress=N][:id=path]`.
// It reports false for a record that must change nothing.
func ParseStatus(body string) (detect.StatusRecord, bool) {
	rec := detect.StatusRecord{Progress: -1}
	if len(body) > 4096 {
		return rec, false
	}
	for _, field := range strings.Split(body, ":") {
		k, v, ok := strings.Cut(field, "=")
		if !ok {
			return rec, false
		}
		switch k {
		case "state":
			rec.State = v
		case "app":
			rec.App = v
		case "kind":
			rec.Kind = v
		case "msg":
			dec, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				if dec, err = base64.RawStdEncoding.DecodeString(v); err != nil {
					return rec, false
				}
			}
			rec.Message = string(dec)
		case "progress":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 100 {
				return rec, false
			}
			rec.Progress = n
		case "id":
			rec.ID = v
		}
	}
	if !statusStates[rec.State] {
		return rec, false
	}
	return rec, true
}

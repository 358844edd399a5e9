package sessions

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentd/agentd/detect"
)

// A kept screen is one screen of a session, written so that a person can
// attach it to a bug report and a developer can replay it: the terminal
// bytes that draw it, its size, what the rules read on it and what the
// session's state was. agentd keeps one by itself where the agent's own
// report and its screen disagree (drift: the rules do not know the
// screen), and writes one on request (agentd capture). `agentd classify`
// and `agentd explain` read the file as they read a raw capture.

// ScreenFormat names the file's format, in its "format" field.
const ScreenFormat = "agentd-screen/1"

// ScreenRecord is a kept screen.
type ScreenRecord struct {
	Format  string    `json:"format"`
	Agentd  string    `json:"agentd"` // agentd's version
	At      time.Time `json:"at"`
	Why     string    `json:"why"`
	Session string    `json:"session"`
	Name    string    `json:"name,omitempty"`
	Agent   string    `json:"agent"`
	// Argv is the program the session runs, secret-shaped words redacted.
	Argv []string `json:"argv"`
	Cols int      `json:"cols"`
	Rows int      `json:"rows"`
	// State is the session's state when the screen was kept, for Reason;
	// Verdict is what the agent's rules read on the screen alone.
	State   string         `json:"state"`
	Reason  string         `json:"reason"`
	Verdict detect.Verdict `json:"verdict"`
	// Raw is the terminal output that draws the screen (agentd's repaint
	// of it, colours kept), with secret-shaped text redacted.
	Raw string `json:"raw"`
}

// maxKeptScreens bounds the kept-screens folder: the oldest go first.
const maxKeptScreens = 50

// Capture makes a record of the session's screen now.
func (s *Session) Capture(why string) (ScreenRecord, error) {
	t, err := s.terminal()
	if err != nil {
		return ScreenRecord{}, err
	}
	raw, v := t.repaint(false), t.classify()
	info := s.Info()
	argv := make([]string, len(s.Argv))
	for i, a := range s.Argv {
		argv[i] = detect.Redact(a)
	}
	return ScreenRecord{
		Format: ScreenFormat, Agentd: s.mgr.opts.Version, At: time.Now().UTC(), Why: why,
		Session: s.ID, Name: s.Name, Agent: info.Agent, Argv: argv,
		Cols: info.Cols, Rows: info.Rows, State: info.State.Name, Reason: info.State.Reason, Verdict: v,
		Raw: detect.Redact(raw),
	}, nil
}

// keepScreen writes the session's screen to the kept-screens folder, where
// the manager has one, and logs it.
func (s *Session) keepScreen(why string) {
	dir := s.mgr.opts.ScreensDir
	if dir == "" {
		return
	}
	rec, err := s.Capture(why)
	if err != nil {
		return
	}
	path, err := WriteScreenRecord(dir, rec)
	if err != nil {
		s.mgr.opts.Log.Warn("drift: keeping the screen failed", "session", s.ID, "err", err)
		return
	}
	s.mgr.opts.Log.Warn("drift: the screen disagrees with what the agent does; screen kept", "session", s.ID, "agent", rec.Agent, "why", why, "file", path)
}

// WriteScreenRecord writes rec into dir (made 0700, the file 0600: a
// screen may show private work) and leaves at most maxKeptScreens there.
func WriteScreenRecord(dir string, rec ScreenRecord) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s-%s-%s.json", rec.At.UTC().Format("20060102T150405.000Z"), safeName(rec.Agent), safeName(rec.Session))
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return "", err
	}
	if kept, err := KeptScreens(dir); err == nil && len(kept) > maxKeptScreens {
		for _, old := range kept[:len(kept)-maxKeptScreens] {
			_ = os.Remove(old)
		}
	}
	return path, nil
}

// KeptScreens lists the kept screens in dir, oldest first.
func KeptScreens(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out) // the names begin with the time
	return out, nil
}

// ReadScreenRecord reads a kept screen; ok is false when data is not one.
func ReadScreenRecord(data []byte) (rec ScreenRecord, ok bool) {
	if len(data) == 0 || data[0] != '{' {
		return ScreenRecord{}, false
	}
	if json.Unmarshal(data, &rec) != nil || rec.Format != ScreenFormat {
		return ScreenRecord{}, false
	}
	return rec, true
}

// safeName keeps a file name's part to letters, digits, '-' and '_'.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}

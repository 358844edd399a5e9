package agentreports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/detect"
)

// Codex CLI's own account of a turn (detect.LogCodexRollout). Codex
// appends events to a rollout file,
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl: task_started,
// task_complete, turn_aborted. The session reads the file of its own Codex
// incrementally, when the screen changes (Codex redraws whenever it logs a
// turn's end), and takes its events as reports. A file that is missing,
// partial or someone else's changes nothing: the screen still decides.

// logEvery bounds how often a session's agent log is read. Until the file
// is found, the look for it backs off from logEvery to findEveryMax: a
// Codex that has not started a session yet (or a program that only looks
// like Codex) must not cost a directory listing on every screen change.
const (
	logEvery     = 200 * time.Millisecond
	findEveryMax = 1600 * time.Millisecond
)

// claimedLogs are rollout files already attributed to a session, so two
// Codex sessions in one folder do not read each other's.
var claimedLogs sync.Map

// rolloutLog follows one session's Codex rollout file.
type rolloutLog struct {
	home    string    // CODEX_HOME
	cwd     string    // the session's folder: Codex records it in session_meta
	started time.Time // files older than the session are not its
	path    string    // the attributed file, once found
	file    *os.File  // path, open and read up to where it was read
	partial []byte
	readAt  time.Time     // the last look
	wait    time.Duration // from readAt to the next look
}

// openCodexRollout is the rollout log of a Codex session, or nil where
// the environment names no CODEX_HOME or HOME to look in.
func openCodexRollout(env []string, cwd string, started time.Time) Log {
	if l := newRolloutLog(env, cwd, started); l != nil {
		return l
	}
	return nil
}

func newRolloutLog(env []string, cwd string, started time.Time) *rolloutLog {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	home := vars["CODEX_HOME"]
	if home == "" && vars["HOME"] != "" {
		home = filepath.Join(vars["HOME"], ".codex")
	}
	if home == "" {
		return nil
	}
	return &rolloutLog{home: home, cwd: cwd, started: started}
}

// Poll reads what Codex appended since the last look and returns its
// newest turn event, if any. A look that is not due yet does nothing and
// returns how long until it is.
func (l *rolloutLog) Poll(sessionID string) (ev *Event, wait time.Duration) {
	if wait := l.wait - time.Since(l.readAt); wait > 0 {
		return nil, wait
	}
	l.readAt = time.Now()
	if l.file == nil {
		if !l.find(sessionID) {
			l.wait = min(max(2*l.wait, logEvery), findEveryMax)
			return nil, 0
		}
		f, err := os.Open(l.path)
		if err != nil {
			return nil, 0
		}
		l.file = f
	}
	l.wait = logEvery
	data, err := io.ReadAll(io.LimitReader(l.file, 8<<20))
	if err != nil {
		return nil, 0
	}
	data = append(l.partial, data...)
	cut := strings.LastIndexByte(string(data), '\n') + 1
	l.partial = append([]byte(nil), data[cut:]...)
	var last *Event
	sc := bufio.NewScanner(strings.NewReader(string(data[:cut])))
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		if r := rolloutEvent(sc.Bytes()); r != nil {
			last = r
		}
	}
	return last, 0
}

// rolloutEvent maps one rollout line to a turn event.
func rolloutEvent(line []byte) *Event {
	var ev struct {
		Timestamp string `json:"timestamp"` // read apart: a line without one still counts
		Type      string `json:"type"`
		Payload   struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.Type != "event_msg" {
		return nil
	}
	at, _ := time.Parse(time.RFC3339Nano, ev.Timestamp)
	r := &Event{Reason: "log." + ev.Payload.Type, At: at, Record: detect.StatusRecord{App: detect.LogCodexRollout, Progress: -1}}
	switch ev.Payload.Type {
	case "task_started":
		r.Record.State = "working"
	case "task_complete":
		r.Record.State, r.Outcome = "done", "completed"
	case "turn_aborted":
		r.Record.State, r.Outcome = "done", "failed"
		if ev.Payload.Reason == "interrupted" {
			r.Outcome = "interrupted"
		}
	default:
		return nil
	}
	return r
}

// find looks for the rollout file this session's Codex is writing: made
// after the session started, in today's or yesterday's folder, recording
// the session's folder as its cwd, and not claimed by another session.
func (l *rolloutLog) find(sessionID string) bool {
	var best string
	var bestMod time.Time
	for _, day := range []time.Time{time.Now().UTC(), time.Now().UTC().Add(-24 * time.Hour), time.Now().Add(-24 * time.Hour)} {
		dir := filepath.Join(l.home, "sessions", day.Format("2006"), day.Format("01"), day.Format("02"))
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			name := e.Name()
			if !strings.HasPrefix(name, "rollout-") || !strings.HasSuffix(name, ".jsonl") {
				continue
			}
			p := filepath.Join(dir, name)
			info, err := e.Info()
			if err != nil || info.ModTime().Before(l.started.Add(-2*time.Second)) {
				continue
			}
			if owner, taken := claimedLogs.Load(p); taken && owner != sessionID {
				continue
			}
			if !l.sameFolder(p) {
				continue
			}
			if best == "" || info.ModTime().After(bestMod) {
				best, bestMod = p, info.ModTime()
			}
		}
	}
	if best == "" {
		return false
	}
	if owner, loaded := claimedLogs.LoadOrStore(best, sessionID); loaded && owner != sessionID {
		return false
	}
	l.path = best
	return true
}

// sameFolder reads the start of the rollout's first line, session_meta,
// for the cwd Codex records there. The line can be long (it carries the
// instructions); the cwd comes early.
func (l *rolloutLog) sameFolder(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if !bytes.Contains(head[:min(len(head), 200)], []byte(`"type":"session_meta"`)) {
		return false
	}
	i := bytes.Index(head, []byte(`"cwd":`))
	if i < 0 {
		return false
	}
	var cwd string
	if json.NewDecoder(bytes.NewReader(head[i+len(`"cwd":`):])).Decode(&cwd) != nil {
		return false
	}
	return filepath.Clean(cwd) == filepath.Clean(l.cwd)
}

// Release closes the file and lets another session claim it.
func (l *rolloutLog) Release() {
	if l.file != nil {
		l.file.Close()
	}
	if l.path != "" {
		claimedLogs.Delete(l.path)
	}
}

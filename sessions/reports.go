package sessions

import (
	"bufio"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentd/agentd/detect"
)

// Programs inside a session tell agentd what they are doing through a Unix
// socket: Claude Code's hooks run `agentd report <event>`, and any script
// can run `agentd signal working|needs-input|turn-ended|done`. Each session
// gets its own token in its environment; a report without the right token
// for its session is refused and logged.

// Environment variables a session's programs find agentd with: the report
// socket, their session and its token; and, under the per-user daemon, the
// daemon's own socket, so `agentd ls` inside a session sees its siblings.
const (
	EnvSocket       = "AGENTD_REPORT_SOCKET"
	EnvSession      = "AGENTD_SESSION"
	EnvToken        = "AGENTD_TOKEN"
	EnvDaemonSocket = "AGENTD_SOCKET"
)

// MaxReport bounds one report on the socket.
const MaxReport = 1 << 20

// Report is one message on the socket.
type Report struct {
	Session string `json:"session"`
	Token   string `json:"token"`
	// Kind is "hook" (Event names a Claude Code hook event, Payload is its
	// JSON) or "signal" (Event is working, needs-input, turn-ended, done).
	Kind    string          `json:"kind"`
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// ReportReply answers a report.
type ReportReply struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// reportServer listens on the socket.
type reportServer struct {
	path string
	ln   net.Listener
	mgr  *Manager
	log  *slog.Logger
}

// listenReports creates the socket: its folder 0700, the socket 0600.
func listenReports(dir string, mgr *Manager, log *slog.Logger) (*reportServer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, fmt.Sprintf("agentd-%d.sock", os.Getpid()))
	if err := CheckSocketPath(path); err != nil {
		return nil, err
	}
	_ = os.Remove(path)
	// The 0700 folder keeps others out in the moment before the chmod.
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	rs := &reportServer{path: path, ln: ln, mgr: mgr, log: log}
	go rs.serve()
	return rs, nil
}

func (rs *reportServer) serve() {
	for {
		conn, err := rs.ln.Accept()
		if err != nil {
			return
		}
		go rs.handle(conn)
	}
}

func (rs *reportServer) handle(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	var rep Report
	reply := ReportReply{OK: true}
	dec := json.NewDecoder(bufio.NewReader(io.LimitReader(conn, MaxReport)))
	if err := dec.Decode(&rep); err != nil {
		reply = ReportReply{Error: "bad report: " + err.Error()}
	} else if err := rs.deliver(rep); err != nil {
		reply = ReportReply{Error: err.Error()}
		// Never the token or the payload: they are secrets or screen text.
		rs.log.Warn("report refused", "session", rep.Session, "kind", rep.Kind, "event", rep.Event, "err", err)
	}
	_ = json.NewEncoder(conn).Encode(reply)
}

var errBadToken = errors.New("refused: no such session, or the token is not that session's")

func (rs *reportServer) deliver(rep Report) error {
	s, err := rs.mgr.Get(rep.Session)
	if err != nil {
		return errBadToken
	}
	if subtle.ConstantTimeCompare([]byte(rep.Token), []byte(s.token)) != 1 {
		return errBadToken
	}
	rec, background, ok, err := reportRecord(rep)
	if err != nil {
		return err
	}
	rs.log.Info("report", "session", rep.Session, "kind", rep.Kind, "event", rep.Event)
	if ok {
		s.setReport(rep.Kind+"."+rep.Event, rec, hookSubject(rep), background)
	}
	return nil
}

// hookSubject is what the tool call a hook reports asks to approve, from
// its tool_name and tool_input: what the agent will run, where the screen
// shows what it drew of it. nil for an event about no tool call.
func hookSubject(rep Report) *detect.Subject {
	if rep.Kind != "hook" || (rep.Event != "PreToolUse" && rep.Event != "PermissionRequest") {
		return nil
	}
	var payload struct {
		ToolName  string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
	}
	if json.Unmarshal(rep.Payload, &payload) != nil || payload.ToolName == "" {
		return nil
	}
	return toolCall{name: payload.ToolName, input: payload.ToolInput}.subject()
}

func (rs *reportServer) close() {
	rs.ln.Close()
	_ = os.Remove(rs.path)
}

// hookStates maps Claude Code hook events to states. Events not listed
// are accepted and change nothing. SessionStart is one of those: Claude
// Code 2.1.332 runs it with the first prompt ("running SessionStart hook"
// under the spinner), so on a busy machine its report came after the
// turn's working one, and read as idle it ended a turn that had just
// begun (test-under-load: done(unknown) while the screen said
// "✻ Actioning…").
var hookStates = map[string]string{
	"UserPromptSubmit":  "working",
	"PreToolUse":        "working",
	"PostToolUse":       "working",
	"PermissionRequest": "blocked",
	"Stop":              "done",
	"SessionEnd":        "clear",
}

var signalStates = map[string]string{
	"working": "working", "needs-input": "blocked", "turn-ended": "done", "done": "done",
}

// reportRecord turns a report into a program-status record. background
// says that the report names work the agent started that still runs (a
// Stop hook's background_tasks); what that means is decide's. ok is false
// for a valid report that says nothing about state.
func reportRecord(rep Report) (rec detect.StatusRecord, background, ok bool, err error) {
	rec = detect.StatusRecord{Progress: -1, App: rep.Kind}
	switch rep.Kind {
	case "signal":
		st, known := signalStates[rep.Event]
		if !known {
			return rec, false, false, fmt.Errorf("unknown signal %q: want working, needs-input, turn-ended or done", rep.Event)
		}
		rec.State = st
		if st == "blocked" {
			rec.Kind, rec.Message = "question", "needs input"
		}
		return rec, false, true, nil
	case "hook":
		var payload struct {
			ToolName         string          `json:"tool_name"`
			ToolInput        json.RawMessage `json:"tool_input"`
			NotificationType string          `json:"notification_type"`
			Message          string          `json:"message"`
			// BackgroundTasks (Stop, Claude Code 2.1.332) lists the turn's
			// background work and whether it still runs.
			BackgroundTasks []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
			} `json:"background_tasks"`
		}
		if len(rep.Payload) > 0 {
			if err := json.Unmarshal(rep.Payload, &payload); err != nil {
				return rec, false, false, fmt.Errorf("hook %s: payload is not JSON: %v", rep.Event, err)
			}
		}
		st, known := hookStates[rep.Event]
		if rep.Event == "Notification" && payload.NotificationType == "permission_prompt" {
			st, known = "blocked", true
		}
		if !known {
			return rec, false, false, nil
		}
		for _, task := range payload.BackgroundTasks {
			background = background || task.Type == "subagent" && task.Status == "running"
		}
		rec.State = st
		if st == "blocked" {
			rec.Kind = "permission"
			rec.Message = payload.Message
			if payload.ToolName != "" {
				rec.Message = "approve " + payload.ToolName + toolSummary(payload.ToolInput)
			}
		}
		return rec, background, true, nil
	}
	return rec, false, false, fmt.Errorf("unknown report kind %q: want hook or signal", rep.Kind)
}

// toolSummary is a short rendering of a tool's input for a question.
func toolSummary(in json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(in, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "url", "pattern"} {
		if v, ok := m[k].(string); ok && v != "" {
			if len(v) > 120 {
				v = v[:120] + "…"
			}
			return ": " + strings.TrimSpace(v)
		}
	}
	return ""
}

func newToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

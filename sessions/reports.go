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
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/sessions/agentreports"
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
	s.mu.Lock()
	hooks := s.manifest.Reports.Hooks
	s.mu.Unlock()
	rec, subject, background, ok, err := reportRecord(rep, hooks)
	if err != nil {
		return err
	}
	rs.log.Info("report", "session", rep.Session, "kind", rep.Kind, "event", rep.Event)
	if ok {
		s.setReport(rep.Kind+"."+rep.Event, rec, subject, background)
	}
	return nil
}

func (rs *reportServer) close() {
	rs.ln.Close()
	_ = os.Remove(rs.path)
}

var signalStates = map[string]string{
	"working": "working", "needs-input": "blocked", "turn-ended": "done", "done": "done",
}

// reportRecord turns a report into a program-status record: a signal is
// agentd's own, a hook is read in the format of hooks, the kind of hooks
// the session's manifest names (agentreports; its default where it names
// none). background says that the report names work the agent started
// that still runs; what that means is decide's. subject is what the tool
// call it reports asks to approve, where it names one. ok is false for a
// valid report that says nothing about state.
func reportRecord(rep Report, hooks string) (rec detect.StatusRecord, subject *detect.Subject, background, ok bool, err error) {
	rec = detect.StatusRecord{Progress: -1, App: rep.Kind}
	switch rep.Kind {
	case "signal":
		st, known := signalStates[rep.Event]
		if !known {
			return rec, nil, false, false, fmt.Errorf("unknown signal %q: want working, needs-input, turn-ended or done", rep.Event)
		}
		rec.State = st
		if st == "blocked" {
			rec.Kind, rec.Message = "question", "needs input"
		}
		return rec, nil, false, true, nil
	case "hook":
		h, known := agentreports.HooksFor(hooks)
		if !known {
			h, _ = agentreports.HooksFor(agentreports.DefaultHooks)
		}
		r, err := h.Read(rep.Event, rep.Payload)
		if err != nil {
			return rec, nil, false, false, err
		}
		if r.Tool != nil {
			subject = toolCall{name: r.Tool.Name, input: r.Tool.Input}.subject()
		}
		r.Record.App = rec.App
		return r.Record, subject, r.Background, r.OK, nil
	}
	return rec, nil, false, false, fmt.Errorf("unknown report kind %q: want hook or signal", rep.Kind)
}

func newToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

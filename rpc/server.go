// Package rpc is agentd's editor-facing JSON-RPC 2.0 server over stdio with
// LSP base-protocol framing. Handlers are thin: they decode params, call
// sessions, encode results. docs/protocol.md is the normative reference;
// the types are rpc/protocol's.
package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/rpc/config"
	"github.com/agentd/agentd/rpc/notices"
	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// Server owns agentd's sessions and serves its clients: the one editor on
// stdio in private mode, or every connection to the daemon's socket. It is
// the fan-out point: each client has its own notification queue (so a slow
// one holds up nobody), its own output subscriptions and its own attention.
type Server struct {
	cfg      Config
	log      *slog.Logger
	mgr      *sessions.Manager
	commands *notices.Commands // [[notify]] commands; nil without entries
	desktop  *notices.Desktop  // nil when [desktop] notify = false
	// hosts are the other machines whose sessions raise desktop notices
	// here; nil until the daemon runs, and where there are none.
	hosts   atomic.Pointer[notices.Hosts]
	started time.Time
	// instance names this daemon to its clients: "pid-start" as it began,
	// kept across handovers, and by a daemon that recovered the sessions.
	instance string

	inputs inputQueue

	mu      sync.Mutex
	clients map[*clientConn]struct{}
	nextID  int
	// changed is poked when a client or a session comes or goes: the
	// daemon's idle timer looks again.
	changed chan struct{}

	lastUpgrade *protocol.UpgradeRecord // guarded by mu

	stopOnce sync.Once
	stop     chan struct{} // closed when the server is to end: exit (private) or agentd/stop
}

// Config is how a Server runs.
type Config struct {
	Version string
	Log     *slog.Logger
	// Cooldown is the window in which each client is told attention at
	// most once per session and state (default 30 s).
	Cooldown time.Duration
	// Private: one client, whose leaving ends every session (--private).
	Private bool
	// Socket is the daemon's socket, told to clients in initialize.
	Socket string
	// Notify are config.toml's [[notify]] entries (away.go).
	Notify []config.Notify
	// Upgrade hands the sessions to another binary (upgrade.go): it
	// returns only when it did not, saying why.
	Upgrade func(protocol.UpgradeParams) error
	// Desktop is config.toml's [desktop] table (desktop.go).
	Desktop config.Desktop
	// Hosts are config.toml's [[hosts]]: a daemon raises desktop notices
	// for their sessions too (notices.FollowHosts).
	Hosts []config.Host
}

// NewServer returns a server whose sessions follow opts.
func NewServer(opts sessions.Options, cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Log == nil {
		opts.Log = cfg.Log
	}
	now := time.Now()
	s := &Server{cfg: cfg, log: cfg.Log, started: now, instance: fmt.Sprintf("%d-%d", os.Getpid(), now.UnixNano()), clients: map[*clientConn]struct{}{},
		changed: make(chan struct{}, 1), stop: make(chan struct{})}
	s.commands = notices.NewCommands(cfg.Notify, cfg.Cooldown, cfg.Log)
	s.desktop = s.newDesktop()
	s.mgr = sessions.NewManager(opts, s)
	return s
}

// Serve serves one client on r and w — the editor on stdio — until it
// sends exit or closes r. In private mode every session's process group is
// ended before it returns.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	c := s.newClient(ctx, protocol.NewStream(r, w, nil))
	select {
	case <-c.conn.DisconnectNotify():
		s.log.Info("editor closed the connection")
	case <-c.exit:
		s.log.Info("exit requested")
	case <-s.stop:
		s.log.Info("stop requested")
	case <-ctx.Done():
	}
	if s.cfg.Private {
		s.mgr.Shutdown()
		s.commands.Close()
		s.desktop.Close()
	}
	s.dropClient(c, true)
	return nil
}

// handle serves one request of client c: its method (methods.go) says
// how it is scheduled and how its params are read.
func (s *Server) handle(ctx context.Context, c *clientConn, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	m, ok := methodTable[req.Method]
	if !ok {
		replyErr(ctx, conn, req, &jsonrpc2.Error{Code: protocol.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found", req.Method)}, s.log)
		return
	}
	switch m.sched {
	case perSession:
		// Off the dispatcher, in arrival order per session: an agent that
		// does not read its input (its PTY buffer full) holds up only the
		// input sent to it after, never the editor's other requests.
		key := inputKey(req)
		prev, mine, ok := s.inputs.enter(key)
		if !ok {
			replyErr(ctx, conn, req, &jsonrpc2.Error{Code: protocol.CodeInputBacklog, Message: fmt.Sprintf("%s: session %q is not reading its input: %d earlier inputs still wait", req.Method, key, maxWaitingInputs)}, s.log)
			return
		}
		go func() {
			defer s.inputs.leave(key, mine)
			if prev != nil {
				<-prev
			}
			s.run(ctx, c, conn, req, m)
		}()
	case mayBlock:
		go s.run(ctx, c, conn, req, m)
	default:
		s.run(ctx, c, conn, req, m)
	}
}

// run calls m's handler for req and answers it.
func (s *Server) run(ctx context.Context, c *clientConn, conn *jsonrpc2.Conn, req *jsonrpc2.Request, m *method) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panic", "method", req.Method, "panic", fmt.Sprint(p))
			replyErr(ctx, conn, req, &jsonrpc2.Error{Code: protocol.CodeInternalError, Message: fmt.Sprintf("internal error in %s", req.Method)}, s.log)
		}
	}()
	result, err := m.serve(s, ctx, c, req)
	if m.quiet {
		return
	}
	if err != nil {
		replyErr(ctx, conn, req, errorFor(err), s.log)
		return
	}
	if !req.Notif {
		if err := conn.Reply(ctx, req.ID, result); err != nil {
			s.log.Warn("reply failed", "method", req.Method, "err", err)
		}
	}
	if m.after != nil {
		m.after(s)
	}
}

// maxWaitingInputs bounds the perSession requests (protocol.MethodInput) waiting behind one
// that an agent has not taken yet; past it they are refused.
const maxWaitingInputs = 256

// inputQueue orders perSession requests (protocol.MethodInput) per session without a goroutine of its
// own: each input waits for the one before it to the same session.
type inputQueue struct {
	mu      sync.Mutex
	last    map[string]chan struct{} // closed when the newest input is written
	waiting map[string]int
}

func (q *inputQueue) enter(key string) (prev, mine chan struct{}, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.last == nil {
		q.last, q.waiting = map[string]chan struct{}{}, map[string]int{}
	}
	if q.waiting[key] >= maxWaitingInputs {
		return nil, nil, false
	}
	q.waiting[key]++
	prev, mine = q.last[key], make(chan struct{})
	q.last[key] = mine
	return prev, mine, true
}

func (q *inputQueue) leave(key string, mine chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	close(mine)
	if q.waiting[key]--; q.waiting[key] == 0 {
		delete(q.waiting, key)
		delete(q.last, key)
	}
}

// inputKey is the sessionId a perSession request names ("" when it names none:
// the handler answers those).
func inputKey(req *jsonrpc2.Request) string {
	var p struct {
		SessionID any `json:"sessionId"`
	}
	if req.Params != nil {
		_ = json.Unmarshal(*req.Params, &p)
	}
	if id, ok := p.SessionID.(string); ok {
		return id
	}
	return ""
}

// replyErr answers req with e on conn — the connection Handle was given:
// the first request can arrive before NewConn has returned to Serve.
func replyErr(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request, e *jsonrpc2.Error, log *slog.Logger) {
	if req.Notif {
		return
	}
	if err := conn.ReplyWithError(ctx, req.ID, e); err != nil {
		log.Warn("error reply failed", "method", req.Method, "err", err)
	}
}

// decode reads params into v, with errors that name the field.
func decode(req *jsonrpc2.Request, v any) error {
	if req.Params == nil || string(*req.Params) == "null" {
		return &jsonrpc2.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("%s: params are required", req.Method)}
	}
	if err := json.Unmarshal(*req.Params, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return &jsonrpc2.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("%s: params: want an object, got %s", req.Method, te.Value)}
			}
			return &jsonrpc2.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("%s: params.%s: want %s, got %s", req.Method, te.Field, te.Type, te.Value)}
		}
		return &jsonrpc2.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("%s: params: %v", req.Method, err)}
	}
	return nil
}

// invalidParams is the error for params of method that make no sense.
func invalidParams(method, problem string) *jsonrpc2.Error {
	return &jsonrpc2.Error{Code: protocol.CodeInvalidParams, Message: method + ": " + problem}
}

// errorFor maps a sessions error to its protocol error.
func errorFor(err error) *jsonrpc2.Error {
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		return je
	}
	e := &jsonrpc2.Error{Code: protocol.CodeInternalError, Message: err.Error()}
	var noSession *sessions.ErrNoSession
	var blocked *sessions.BlockedError
	var stale *sessions.StaleError
	switch {
	case errors.As(err, &noSession):
		e.Code = protocol.CodeSessionNotFound
	case errors.Is(err, sessions.ErrExited):
		e.Code = protocol.CodeSessionExited
	case errors.As(err, &blocked):
		e.Code = protocol.CodeSessionBlocked
		e.SetError(map[string]any{"prompt": wirePrompt(blocked.Prompt)})
	case errors.As(err, &stale):
		e.Code = protocol.CodePromptStale
		e.SetError(map[string]any{"prompt": wirePrompt(stale.Current)})
	case errors.Is(err, sessions.ErrUnknownOption):
		e.Code = protocol.CodeOptionUnknown
	case errors.Is(err, sessions.ErrNotAnswerable), errors.Is(err, sessions.ErrMovedByHand):
		e.Code = protocol.CodeNotAnswerable
	case errors.Is(err, sessions.ErrAlreadyAnswer):
		e.Code = protocol.CodeAlreadyAnswered
	case errors.Is(err, sessions.ErrShuttingDown):
		e.Code = protocol.CodeShuttingDown
	case errors.Is(err, sessions.ErrNoScreen), errors.Is(err, sessions.ErrNotACP):
		e.Code = protocol.CodeNotSupported
	case errors.Is(err, sessions.ErrTurnRunning):
		e.Code = protocol.CodeTurnRunning
	case errors.Is(err, sessions.ErrLoggingIn):
		e.Code = protocol.CodeAuthRequired
	}
	return e
}

func toSession(in sessions.Info) protocol.Session {
	out := protocol.Session{
		SessionID: in.ID, Name: in.Name, Agent: in.Agent, Argv: in.Argv, Cwd: in.Cwd, Pid: in.Pid,
		Cols: in.Cols, Rows: in.Rows, State: in.State.Name, Outcome: in.State.Outcome,
		StateSource: in.State.Source, Reason: in.State.Reason, Since: stamp(in.State.Since), Prompt: wirePrompt(in.State.Prompt),
		Message: in.State.Message, LoginSessionID: in.Login,
	}
	if a := in.AgentInfo; a != nil {
		out.AgentInfo = &protocol.ACPAgentInfo{Name: a.Name, Title: a.Title, Version: a.Version}
	}
	if in.Exit != nil {
		out.Exit = &protocol.Exit{ExitCode: in.Exit.Code, Signal: in.Exit.Signal, At: stamp(in.ExitedAt)}
	}
	if in.Origin.Client != "" || len(in.Origin.Folders) > 0 {
		out.Origin = &protocol.Origin{Client: in.Origin.Client, WorkspaceFolders: in.Origin.Folders}
	}
	return out
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// slogLogger adapts jsonrpc2's logger to slog.
type slogLogger struct{ l *slog.Logger }

func (s slogLogger) Printf(format string, v ...any) {
	s.l.Warn(strings.TrimSpace(fmt.Sprintf(format, v...)))
}

package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/sessions/program"
)

// ProtocolVersion is the ACP version this client speaks.
const ProtocolVersion = sdk.ProtocolVersionNumber

// Defaults for Options left zero.
const (
	DefaultStartTimeout = 60 * time.Second
	// killGrace is how long Close waits after SIGHUP before SIGKILL, and how
	// long the client waits for the agent's stdout to end after its exit.
	killGrace = 2 * time.Second
	// cancelGrace is how long Prompt waits for the agent to end the turn
	// after its context is done and it sent session/cancel.
	cancelGrace = 5 * time.Second
	// codeAuthRequired is ACP's auth_required error code.
	codeAuthRequired = -32000
	// codeResourceNotFound is ACP's resource_not_found error code.
	codeResourceNotFound = -32002
	maxHeld              = 10000
	maxToolCalls         = 4096
)

// Options say how to run one ACP agent.
type Options struct {
	// Argv runs directly, never through a shell. Argv[0] is looked up on
	// the PATH of Env (or taken relative to Cwd when it holds a "/").
	Argv []string
	// Env is the agent's whole environment; nil means os.Environ().
	Env []string
	// Cwd is the session folder: the agent's working directory, the cwd of
	// session/new, and the only place fs/* may touch. Must exist.
	Cwd string
	// Handler receives updates, permissions and the exit (nil: ignored).
	Handler Handler
	// Log receives the agent's stderr (level Info, attribute
	// stream=stderr) and protocol problems (Warn). Nil discards.
	Log *slog.Logger
	// StartTimeout bounds initialize, authenticate and session/new
	// together (default DefaultStartTimeout).
	StartTimeout time.Duration
	// PermissionTimeout, when > 0, answers a permission nobody answered in
	// that time with the agent's reject option (reject_once, else
	// reject_always, else "cancelled").
	PermissionTimeout time.Duration
	// FS serves fs/read_text_file and fs/write_text_file, confined to Cwd,
	// and advertises them. Without it the agent uses its own file access.
	FS bool
	// Terminals, when set, serves terminal/* and advertises the terminal
	// capability. Nil: not advertised; the agent runs commands itself.
	Terminals TerminalHost
	// AuthMethod is the authenticate method to use if session/new answers
	// auth_required. Empty: an "env_var" method whose variables are all in
	// Env, if the agent offers one; otherwise Start fails with an
	// AuthRequiredError naming the methods offered. A "terminal" method
	// fails with a LoginNeededError unless LoggedIn says its login ran.
	AuthMethod string
	// LoggedIn says the terminal login of AuthMethod has run and ended
	// well: Start authenticates with it and opens the session.
	LoggedIn bool
	// ClientVersion is sent in clientInfo (name "agentd").
	ClientVersion string
	// MaxLine bounds one message from the agent (default DefaultMaxLine);
	// a longer line is logged and skipped.
	MaxLine int
}

// Client is one running ACP agent with one session.
type Client struct {
	o      Options
	log    *slog.Logger
	h      Handler
	argv0  string
	proc   process
	conn   *jsonrpc2.Conn
	events *dispatcher
	fs     *confined // nil unless Options.FS
	cwd    string    // Options.Cwd, cleaned
	info   AgentInfo

	// ctx is cancelled when the agent is gone (ends terminal waits).
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	sessionID string
	held      []heldEvent
	pending   map[string]*pending
	order     []string // pending keys in arrival order
	seq       int
	tools     map[string]*ToolCall
	toolOrder []string
	turn      bool
	terms     map[string]bool // terminal ids this agent created and has not released
	exited    bool
	exit      Exit
	stderr    tail

	closeOnce  sync.Once
	ready      chan struct{} // closed once conn is set
	stderrDone chan struct{} // closed when the agent's stderr has ended
	done       chan struct{}
}

type heldEvent struct {
	sessionID string
	deliver   func() // called with c.mu held, once the session id is known
	reject    func() // called when it belongs to another session
}

type pending struct {
	id    jsonrpc2.ID
	p     Permission
	timer *time.Timer
}

// Start runs the agent, initializes it (advertising only what is
// implemented and enabled), authenticates if it asks, and opens a session
// in Cwd. On error the agent is stopped and the Handler hears nothing.
func Start(ctx context.Context, o Options) (*Client, error) {
	c, err := newClient(o)
	if err != nil {
		return nil, err
	}
	path, err := program.LookPath(o.Argv[0], c.cwd, c.o.Env)
	if err != nil {
		c.closeFS()
		return nil, fmt.Errorf("acp: %w", err)
	}
	stdout, stderr, stdin, proc, err := spawn(path, c.o, c.cwd)
	if err != nil {
		c.closeFS()
		return nil, fmt.Errorf("acp: start %s: %w", o.Argv[0], err)
	}
	c.connect(stdout, stderr, stdin, proc)
	return c.start(ctx)
}

// newClient checks o and fills in its defaults.
func newClient(o Options) (*Client, error) {
	if len(o.Argv) == 0 || o.Argv[0] == "" {
		return nil, errors.New("acp: empty argv")
	}
	if o.Cwd == "" || !filepath.IsAbs(o.Cwd) {
		return nil, fmt.Errorf("acp: cwd %q is not an absolute path", o.Cwd)
	}
	if st, err := os.Stat(o.Cwd); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("acp: cwd %s is not a folder", o.Cwd)
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	c := &Client{
		o:       o,
		log:     o.Log,
		h:       o.Handler,
		argv0:   filepath.Base(o.Argv[0]),
		cwd:     filepath.Clean(o.Cwd),
		pending: map[string]*pending{},
		tools:   map[string]*ToolCall{},
		terms:   map[string]bool{},
		done:    make(chan struct{}),
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.log = c.log.With("agent", c.argv0)
	if c.h == nil {
		c.h = HandlerFuncs{}
	}
	if o.FS {
		fs, err := newConfined(c.cwd)
		if err != nil {
			return nil, fmt.Errorf("acp: %w", err)
		}
		c.fs = fs
	}
	return c, nil
}

// start runs the handshake on a connected agent.
func (c *Client) start(ctx context.Context) (*Client, error) {
	o := c.o
	sctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	step, err := c.handshake(sctx)
	if err != nil {
		c.events.mute()
		_ = c.Close()
		switch {
		case errors.Is(err, ErrExited):
			why := "exited"
			if e := c.Exit(); e.Err != nil {
				why = e.Err.Error()
			}
			return nil, exitedError{fmt.Sprintf("acp: %s exited during %s: %s", c.argv0, step, why)}
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return nil, fmt.Errorf("acp: %s did not answer %s within the start timeout (%s)%s", c.argv0, step, o.StartTimeout, c.stderrNote())
		}
		var auth *AuthRequiredError
		if errors.As(err, &auth) {
			return nil, auth
		}
		var login *LoginNeededError
		if errors.As(err, &login) {
			return nil, login
		}
		return nil, fmt.Errorf("acp: %s: %s: %w%s", c.argv0, step, err, c.stderrNote())
	}
	return c, nil
}

// process is the agent's process as the Client sees it (a fake one in
// tests).
type process interface {
	// wait blocks until the process has ended.
	wait() Exit
	// signal signals the process group.
	signal(sig syscall.Signal)
	pid() int
}

// osProcess is a real process, leader of its own process group.
type osProcess struct{ cmd *exec.Cmd }

func (p osProcess) pid() int { return p.cmd.Process.Pid }

func (p osProcess) signal(sig syscall.Signal) { _ = syscall.Kill(-p.cmd.Process.Pid, sig) }

func (p osProcess) wait() Exit {
	werr := p.cmd.Wait()
	st := p.cmd.ProcessState
	e := Exit{Code: st.ExitCode(), Err: werr}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Code = -1
		e.Signal = program.SignalName(ws.Signal())
	}
	return e
}

// spawn starts the agent's process with pipes for its stdio.
func spawn(path string, o Options, dir string) (stdout, stderr io.ReadCloser, stdin io.WriteCloser, p process, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, nil, nil, nil, err
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        o.Argv,
		Env:         o.Env,
		Dir:         dir,
		Stdin:       inR,
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, nil, nil, nil, err
	}
	return outR, errR, inW, osProcess{cmd}, nil
}

// connect serves a started agent: the connection, its stderr, its exit.
func (c *Client) connect(stdout, stderr io.ReadCloser, stdin io.WriteCloser, p process) {
	c.proc = p
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.events = newDispatcher()
	go c.events.run()
	c.ready = make(chan struct{})
	c.stderrDone = make(chan struct{})
	stream := newLineStream(stdout, stdin, c.log, c.o.MaxLine)
	c.conn = jsonrpc2.NewConn(context.Background(), stream, rpcHandler{c}, jsonrpc2.SetLogger(slogPrintf{c.log}))
	close(c.ready)
	go c.readStderr(stderr)
	go c.watch()
}

// handshake runs initialize, authenticate (when asked) and session/new.
// It returns the step it stopped at.
func (c *Client) handshake(ctx context.Context) (string, error) {
	caps := sdk.ClientCapabilities{
		Fs:       sdk.FileSystemCapabilities{ReadTextFile: c.fs != nil, WriteTextFile: c.fs != nil},
		Terminal: c.o.Terminals != nil,
	}
	version := c.o.ClientVersion
	if version == "" {
		version = "dev"
	}
	var init initializeResult
	if err := c.call(ctx, sdk.AgentMethodInitialize, sdk.InitializeRequest{
		ProtocolVersion:    ProtocolVersion,
		ClientCapabilities: caps,
		ClientInfo:         &sdk.Implementation{Name: "agentd", Version: version},
	}, &init); err != nil {
		return "initialize", err
	}
	if init.ProtocolVersion != ProtocolVersion {
		return "initialize", fmt.Errorf("the agent speaks ACP protocol version %d, this client %d", init.ProtocolVersion, ProtocolVersion)
	}
	c.info = AgentInfo{
		Name: init.AgentInfo.Name, Title: init.AgentInfo.Title, Version: init.AgentInfo.Version,
		ProtocolVersion: init.ProtocolVersion,
		Capabilities:    init.AgentCapabilities,
	}
	for _, m := range init.AuthMethods {
		c.info.AuthMethods = append(c.info.AuthMethods, m.method(c.o.Argv[0]))
	}
	newSession := func() (string, error) {
		var res struct {
			SessionID string `json:"sessionId"`
		}
		err := c.call(ctx, sdk.AgentMethodSessionNew, sdk.NewSessionRequest{Cwd: c.cwd, McpServers: []sdk.McpServer{}}, &res)
		if err == nil && res.SessionID == "" {
			err = errors.New("session/new answered without a sessionId")
		}
		return res.SessionID, err
	}
	sid, err := newSession()
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == codeAuthRequired {
		method, merr := c.chooseAuth(rpcErr.Message)
		if merr != nil {
			return "session/new", merr
		}
		terminal := false
		for _, m := range c.info.AuthMethods {
			if m.ID == method && m.Type == "terminal" {
				if !c.o.LoggedIn {
					return "session/new", &LoginNeededError{Agent: c.info, Method: m}
				}
				terminal = true
			}
		}
		// After a terminal login some agents want authenticate and some
		// (Copilot CLI) have no such method and just read the new login.
		if err := c.call(ctx, sdk.AgentMethodAuthenticate, sdk.AuthenticateRequest{MethodId: method}, nil); err != nil && !terminal {
			return "authenticate " + method, err
		} else if err != nil {
			c.log.Info("acp: authenticate after the terminal login failed; opening the session anyway", "method", method, "err", err)
		}
		c.info.AuthMethod = method
		if sid, err = newSession(); errors.As(err, &rpcErr) && rpcErr.Code == codeAuthRequired {
			return "session/new", &AuthRequiredError{Agent: c.info, Message: rpcErr.Message + " (after authenticate " + method + ")", Methods: c.info.AuthMethods, Step: "session/new"}
		}
	}
	if err != nil {
		return "session/new", err
	}
	c.setSession(sid)
	return "", nil
}

type initializeResult struct {
	ProtocolVersion   int             `json:"protocolVersion"`
	AgentCapabilities json.RawMessage `json:"agentCapabilities"`
	AgentInfo         struct {
		Name    string `json:"name"`
		Title   string `json:"title"`
		Version string `json:"version"`
	} `json:"agentInfo"`
	AuthMethods []authMethodWire `json:"authMethods"`
}

// authMethodWire is an authMethods entry as agents send it.
type authMethodWire struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"`
	Vars        []struct {
		Name string `json:"name"`
	} `json:"vars"`
	Args []string       `json:"args"`
	Env  map[string]any `json:"env"`
	Meta struct {
		TerminalAuth *struct {
			Command string         `json:"command"`
			Args    []string       `json:"args"`
			Env     map[string]any `json:"env"`
			Label   string         `json:"label"`
		} `json:"terminal-auth"`
	} `json:"_meta"`
}

// method reads one offered method; program is the agent's own, which ACP's
// "terminal" type runs with its args.
func (w authMethodWire) method(program string) AuthMethod {
	m := AuthMethod{ID: w.ID, Name: w.Name, Description: w.Description, Type: w.Type}
	if m.Type == "" {
		m.Type = "agent"
	}
	for _, v := range w.Vars {
		m.Vars = append(m.Vars, v.Name)
	}
	env := w.Env
	switch ta := w.Meta.TerminalAuth; {
	case m.Type == "terminal":
		m.Command, m.Args = program, w.Args
	case ta != nil && ta.Command != "":
		m.Type, m.Command, m.Args, m.Label, env = "terminal", ta.Command, ta.Args, ta.Label, ta.Env
	}
	for k, v := range env {
		if m.Env == nil {
			m.Env = map[string]string{}
		}
		m.Env[k] = fmt.Sprint(v)
	}
	return m
}

// chooseAuth picks the authenticate method: the configured one, else an
// env_var method whose variables are all set. Without one, the error says
// what the agent offers.
func (c *Client) chooseAuth(message string) (string, error) {
	refused := &AuthRequiredError{Agent: c.info, Message: message, Methods: c.info.AuthMethods, Step: "session/new"}
	if c.o.AuthMethod != "" {
		for _, m := range c.info.AuthMethods {
			if m.ID == c.o.AuthMethod {
				return m.ID, nil
			}
		}
		refused.Message += fmt.Sprintf("; it offers no method %q", c.o.AuthMethod)
		return "", refused
	}
	for _, m := range c.info.AuthMethods {
		if m.Type != "env_var" || len(m.Vars) == 0 {
			continue
		}
		ok := true
		for _, v := range m.Vars {
			if envValue(c.o.Env, v) == "" {
				ok = false
			}
		}
		if ok {
			return m.ID, nil
		}
	}
	return "", refused
}

// call is a request to the agent that fails early when it is gone.
func (c *Client) call(ctx context.Context, method string, params, result any) error {
	w, err := c.conn.DispatchCall(ctx, method, params)
	if err != nil {
		return c.callErr(err)
	}
	return c.callErr(w.Wait(ctx, result))
}

// callErr turns a closed connection into an error that wraps ErrExited
// and says why the agent ended.
func (c *Client) callErr(err error) error {
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
		// The agent's stdin is gone: it exited or will not listen again.
		_ = c.conn.Close()
		err = jsonrpc2.ErrClosed
	}
	if !errors.Is(err, jsonrpc2.ErrClosed) {
		return err
	}
	select {
	case <-c.done:
	case <-time.After(2*killGrace + time.Second):
		return exitedError{"acp: the connection to the agent closed"}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exit.Err != nil {
		return exitedError{"acp: the agent exited: " + c.exit.Err.Error()}
	}
	return exitedError{"acp: the agent exited"}
}

// exitedError is an error that matches ErrExited.
type exitedError struct{ msg string }

func (e exitedError) Error() string        { return e.msg }
func (e exitedError) Is(target error) bool { return target == ErrExited }

// setSession makes the session id known and delivers what was held for it.
func (c *Client) setSession(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessionID = id
	for _, ev := range c.held {
		if ev.sessionID == id {
			ev.deliver()
		} else {
			c.log.Warn("acp: dropped a message for another session", "session", ev.sessionID)
			if ev.reject != nil {
				ev.reject()
			}
		}
	}
	c.held = nil
}

// route delivers an event for session sid now, or holds it until the
// session id is known. deliver runs with c.mu held.
func (c *Client) route(sid string, deliver, reject func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionID == "" {
		if len(c.held) >= maxHeld {
			c.log.Warn("acp: too many messages before session/new answered; dropped one")
			return
		}
		c.held = append(c.held, heldEvent{sessionID: sid, deliver: deliver, reject: reject})
		return
	}
	if sid != c.sessionID {
		c.log.Warn("acp: dropped a message for another session", "session", sid)
		if reject != nil {
			reject()
		}
		return
	}
	deliver()
}

// rpcHandler serves the agent's requests and notifications. It runs on
// the connection's read loop, so everything it queues for the Handler
// keeps wire order.
type rpcHandler struct{ c *Client }

func (h rpcHandler) Handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	c := h.c
	<-c.ready
	params := json.RawMessage("null")
	if req.Params != nil {
		params = *req.Params
	}
	switch req.Method {
	case sdk.ClientMethodSessionUpdate:
		c.onUpdate(params)
		if !req.Notif {
			c.reply(req.ID, nil, nil)
		}
		return
	case sdk.ClientMethodSessionRequestPermission:
		if req.Notif {
			c.log.Warn("acp: session/request_permission sent as a notification; ignored")
			return
		}
		c.onPermission(req.ID, params)
		return
	case sdk.ClientMethodFsReadTextFile, sdk.ClientMethodFsWriteTextFile:
		if c.fs != nil && !req.Notif {
			go c.serveFS(req.ID, req.Method, params)
			return
		}
	case sdk.ClientMethodTerminalCreate, sdk.ClientMethodTerminalOutput, sdk.ClientMethodTerminalWaitForExit,
		sdk.ClientMethodTerminalKill, sdk.ClientMethodTerminalRelease:
		if c.o.Terminals != nil && !req.Notif {
			go c.serveTerminal(req.ID, req.Method, params)
			return
		}
	}
	if req.Notif {
		c.log.Debug("acp: ignored a notification", "method", req.Method)
		return
	}
	c.log.Debug("acp: method not found", "method", req.Method)
	c.reply(req.ID, nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "method not found: " + req.Method})
}

// reply answers one of the agent's requests.
func (c *Client) reply(id jsonrpc2.ID, result any, rerr *jsonrpc2.Error) {
	var err error
	if rerr != nil {
		err = c.conn.ReplyWithError(context.Background(), id, rerr)
	} else {
		err = c.conn.Reply(context.Background(), id, result)
	}
	if err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		c.log.Warn("acp: could not answer the agent", "id", id.String(), "error", err)
	}
}

type wireUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	ToolCallID    string          `json:"toolCallId"`
	Title         *string         `json:"title"`
	Kind          *string         `json:"kind"`
	Status        *string         `json:"status"`
	Content       json.RawMessage `json:"content"`
	RawInput      json.RawMessage `json:"rawInput"`
	Locations     []location      `json:"locations"`
}

// location is one of a tool call's "locations": a file it touches.
type location struct {
	Path string `json:"path"`
}

// diffs are the "diff" items of a tool call's content.
func diffs(content json.RawMessage) []Diff {
	var items []struct {
		Type string `json:"type"`
		Diff
	}
	if len(content) == 0 || json.Unmarshal(content, &items) != nil {
		return nil
	}
	var out []Diff
	for _, it := range items {
		if it.Type == "diff" && it.Path != "" {
			out = append(out, it.Diff)
		}
	}
	return out
}

func paths(ls []location) []string {
	var out []string
	for _, l := range ls {
		if l.Path != "" {
			out = append(out, l.Path)
		}
	}
	return out
}

func (c *Client) onUpdate(params json.RawMessage) {
	var n struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	var w wireUpdate
	if err := json.Unmarshal(params, &n); err != nil || len(n.Update) == 0 || json.Unmarshal(n.Update, &w) != nil {
		c.log.Warn("acp: skipped a malformed session/update", "bytes", len(params))
		c.log.Debug("acp: the malformed session/update", "params", clip(params))
		return
	}
	c.route(n.SessionID, func() {
		u := Update{SessionID: n.SessionID, Kind: w.SessionUpdate, Raw: n.Update}
		switch w.SessionUpdate {
		case "tool_call", "tool_call_update":
			if w.ToolCallID != "" {
				u.ToolCall, u.NewToolCall = c.mergeTool(w)
			}
		case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk":
			var b struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(w.Content, &b) == nil && b.Type == "text" {
				u.Text = b.Text
			}
		}
		c.events.push(func() { c.h.Update(u) })
	}, nil)
}

// mergeTool folds an update into the tool call table (c.mu held) and
// returns a copy of the call's state and whether the id was new.
func (c *Client) mergeTool(w wireUpdate) (*ToolCall, bool) {
	t, ok := c.tools[w.ToolCallID]
	if !ok {
		t = &ToolCall{ID: w.ToolCallID}
		c.tools[w.ToolCallID] = t
		c.toolOrder = append(c.toolOrder, w.ToolCallID)
		if len(c.toolOrder) > maxToolCalls {
			delete(c.tools, c.toolOrder[0])
			c.toolOrder = c.toolOrder[1:]
		}
	}
	if w.Title != nil {
		t.Title = *w.Title
	}
	if w.Kind != nil {
		t.Kind = *w.Kind
	}
	if w.Status != nil {
		t.Status = *w.Status
	}
	if len(w.RawInput) > 0 && string(w.RawInput) != "null" {
		t.RawInput = w.RawInput
	}
	if p := paths(w.Locations); len(p) > 0 {
		t.Paths = p
	}
	if d := diffs(w.Content); len(d) > 0 {
		t.Diffs = d
	}
	cp := *t
	return &cp, !ok
}

func (c *Client) onPermission(id jsonrpc2.ID, params json.RawMessage) {
	var r struct {
		SessionID string   `json:"sessionId"`
		Options   []Option `json:"options"`
		ToolCall  struct {
			ToolCallID string          `json:"toolCallId"`
			Title      *string         `json:"title"`
			Kind       *string         `json:"kind"`
			RawInput   json.RawMessage `json:"rawInput"`
			Locations  []location      `json:"locations"`
			Content    json.RawMessage `json:"content"`
		} `json:"toolCall"`
	}
	if err := json.Unmarshal(params, &r); err != nil {
		c.reply(id, nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: "invalid session/request_permission params: " + err.Error()})
		return
	}
	deliver := func() {
		c.seq++
		p := Permission{
			Key:        "p" + strconv.Itoa(c.seq),
			SessionID:  r.SessionID,
			ToolCallID: r.ToolCall.ToolCallID,
			Options:    r.Options,
			Raw:        params,
			Since:      time.Now(),
		}
		if t := c.tools[p.ToolCallID]; t != nil {
			p.Title, p.Kind, p.RawInput, p.Paths, p.Diffs = t.Title, t.Kind, t.RawInput, t.Paths, t.Diffs
		}
		if d := diffs(r.ToolCall.Content); len(d) > 0 {
			p.Diffs = d
		}
		if raw := r.ToolCall.RawInput; len(raw) > 0 && string(raw) != "null" {
			p.RawInput = raw
		}
		if ps := paths(r.ToolCall.Locations); len(ps) > 0 {
			p.Paths = ps
		}
		if r.ToolCall.Title != nil {
			p.Title = *r.ToolCall.Title
		}
		if r.ToolCall.Kind != nil {
			p.Kind = *r.ToolCall.Kind
		}
		pe := &pending{id: id, p: p}
		if c.o.PermissionTimeout > 0 {
			key := p.Key
			pe.timer = time.AfterFunc(c.o.PermissionTimeout, func() { c.timeout(key) })
		}
		c.pending[p.Key] = pe
		c.order = append(c.order, p.Key)
		c.log.Debug("acp: permission requested", "id", id.String(), "key", p.Key, "title", p.Title)
		c.events.push(func() { c.h.Permission(p) })
	}
	reject := func() {
		go c.reply(id, nil, &jsonrpc2.Error{Code: jsonrpc2.CodeInvalidParams, Message: "unknown session " + r.SessionID})
	}
	c.route(r.SessionID, deliver, reject)
}

// take removes a pending permission (c.mu held) and queues its
// settlement for the Handler. check, when set, may refuse.
func (c *Client) take(key string, s Settled, check func(*pending) error) (*pending, error) {
	pe := c.pending[key]
	if pe == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownPermission, key)
	}
	if check != nil {
		if err := check(pe); err != nil {
			return nil, err
		}
	}
	delete(c.pending, key)
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i:i], c.order[i+1:]...)
			break
		}
	}
	if pe.timer != nil {
		pe.timer.Stop()
	}
	s.Key = key
	c.events.push(func() { c.h.PermissionSettled(s) })
	return pe, nil
}

func outcomeFor(s Settled) sdk.RequestPermissionResponse {
	if s.Outcome == "selected" {
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{
			Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(s.OptionID)},
		}}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{
		Cancelled: &sdk.RequestPermissionOutcomeCancelled{},
	}}
}

// Answer selects optionID for the pending permission key.
func (c *Client) Answer(key, optionID string) error {
	s := Settled{Reason: SettledAnswered, Outcome: "selected", OptionID: optionID}
	c.mu.Lock()
	pe, err := c.take(key, s, func(pe *pending) error {
		for _, o := range pe.p.Options {
			if o.ID == optionID {
				return nil
			}
		}
		return fmt.Errorf("%w: %q (options: %s)", ErrUnknownOption, optionID, optionIDs(pe.p.Options))
	})
	c.mu.Unlock()
	if err != nil {
		return err
	}
	c.reply(pe.id, outcomeFor(s), nil)
	return nil
}

func optionIDs(opts []Option) string {
	var ids []string
	for _, o := range opts {
		ids = append(ids, o.ID)
	}
	return strings.Join(ids, ", ")
}

// timeout answers an unanswered permission with the agent's reject option.
func (c *Client) timeout(key string) {
	c.mu.Lock()
	pe := c.pending[key]
	if pe == nil {
		c.mu.Unlock()
		return
	}
	s := Settled{Reason: SettledTimeout, Outcome: "cancelled"}
	if id := rejectOption(pe.p.Options); id != "" {
		s.Outcome, s.OptionID = "selected", id
	}
	_, err := c.take(key, s, nil)
	c.mu.Unlock()
	if err == nil {
		c.log.Info("acp: permission timed out", "key", key, "answer", s.OptionID)
		c.reply(pe.id, outcomeFor(s), nil)
	}
}

// rejectOption is the option to send when nobody answered: reject_once,
// else reject_always, else none.
func rejectOption(opts []Option) string {
	for _, kind := range []string{"reject_once", "reject_always"} {
		for _, o := range opts {
			if o.Kind == kind {
				return o.ID
			}
		}
	}
	return ""
}

// Pending returns the permissions waiting for an answer, oldest first.
func (c *Client) Pending() []Permission {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Permission, 0, len(c.order))
	for _, k := range c.order {
		out = append(out, c.pending[k].p)
	}
	return out
}

// Prompt runs one turn with text as the prompt and returns the agent's
// stopReason (see Outcome). Every update the agent sent before its answer
// has been given to the Handler when Prompt returns (so do not call Prompt
// from a Handler method). If ctx ends first, Prompt cancels the turn and
// waits a little for the agent to end it. One turn at a time: a second
// Prompt meanwhile fails with ErrBusy. If the agent exits during the turn
// the error wraps ErrExited.
func (c *Client) Prompt(ctx context.Context, text string) (stopReason string, err error) {
	c.mu.Lock()
	switch {
	case c.exited:
		c.mu.Unlock()
		return "", c.callErr(jsonrpc2.ErrClosed)
	case c.turn:
		c.mu.Unlock()
		return "", ErrBusy
	}
	c.turn = true
	sid := c.sessionID
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.turn = false
		c.mu.Unlock()
	}()
	w, err := c.conn.DispatchCall(context.Background(), sdk.AgentMethodSessionPrompt, sdk.PromptRequest{
		SessionId: sdk.SessionId(sid),
		Prompt:    []sdk.ContentBlock{sdk.TextBlock(text)},
	})
	if err != nil {
		return "", c.callErr(err)
	}
	var res struct {
		StopReason string `json:"stopReason"`
	}
	err = w.Wait(ctx, &res)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		_ = c.Cancel()
		wctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
		defer cancel()
		if werr := w.Wait(wctx, &res); werr != nil {
			return "", ctx.Err()
		}
		c.events.barrier(wctx)
		return res.StopReason, ctx.Err()
	}
	var rpcErr *jsonrpc2.Error
	if err = c.callErr(err); errors.Is(err, ErrExited) {
		return "", err
	} else if errors.As(err, &rpcErr) && rpcErr.Code == codeAuthRequired {
		return "", &AuthRequiredError{Agent: c.info, Message: rpcErr.Message, Methods: c.info.AuthMethods, Step: "session/prompt"}
	} else if err != nil {
		return "", fmt.Errorf("acp: session/prompt: %w", err)
	}
	c.events.barrier(ctx)
	return res.StopReason, nil
}

// Cancel sends session/cancel and answers every pending permission with
// the "cancelled" outcome itself: agents end the turn on session/cancel
// without withdrawing their open permission requests.
func (c *Client) Cancel() error {
	c.mu.Lock()
	sid, exited := c.sessionID, c.exited
	c.mu.Unlock()
	if exited {
		return ErrExited
	}
	err := c.conn.Notify(context.Background(), sdk.AgentMethodSessionCancel, sdk.CancelNotification{SessionId: sdk.SessionId(sid)})
	c.settleAll(Settled{Reason: SettledCancelled, Outcome: "cancelled"}, true)
	if err != nil {
		return c.callErr(err)
	}
	return nil
}

// settleAll settles every pending permission with s, answering the agent
// when reply is set.
func (c *Client) settleAll(s Settled, reply bool) {
	c.mu.Lock()
	var ids []jsonrpc2.ID
	for len(c.order) > 0 {
		pe, err := c.take(c.order[0], s, nil)
		if err != nil {
			break
		}
		ids = append(ids, pe.id)
	}
	c.mu.Unlock()
	if reply {
		for _, id := range ids {
			c.reply(id, outcomeFor(s), nil)
		}
	}
}

// SessionID is the session session/new opened.
func (c *Client) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// Info is what the agent said about itself.
func (c *Client) Info() AgentInfo { return c.info }

// Pid is the agent's process id (also its process group id).
func (c *Client) Pid() int { return c.proc.pid() }

// Done is closed once the agent has exited (Handler.Exited is queued by
// then, maybe not yet called).
func (c *Client) Done() <-chan struct{} { return c.done }

// Exit is how the agent ended; valid once Done is closed.
func (c *Client) Exit() Exit {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exit
}

func (c *Client) hasExited() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exited
}

// Close ends the agent: its stdin is closed, its process group gets
// SIGHUP, then SIGKILL after 2 s if anything is left. It returns once the
// process is gone. Pending permissions settle as exited.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		if !c.hasExited() {
			_ = c.conn.Close()
			c.signal(syscall.SIGHUP)
		}
		select {
		case <-c.done:
		case <-time.After(killGrace):
			c.signal(syscall.SIGKILL)
			<-c.done
		}
	})
	<-c.done
	return nil
}

func (c *Client) signal(sig syscall.Signal) { c.proc.signal(sig) }

// watch waits for the process, then for the connection to end, and
// finishes the client.
func (c *Client) watch() {
	go func() {
		// The agent closed its stdout (or it broke): it cannot be talked
		// to any more, so it is stopped if it does not go by itself.
		<-c.conn.DisconnectNotify()
		select {
		case <-c.done:
		case <-time.After(killGrace):
			c.signal(syscall.SIGHUP)
			select {
			case <-c.done:
			case <-time.After(killGrace):
				c.signal(syscall.SIGKILL)
			}
		}
	}()
	e := c.proc.wait()
	// What the agent wrote before it exited is still in the pipes; read it
	// unless something else holds them open.
	grace, cancel := context.WithTimeout(context.Background(), killGrace)
	defer cancel()
	select {
	case <-c.conn.DisconnectNotify():
	case <-grace.Done():
	}
	select {
	case <-c.stderrDone:
	case <-grace.Done():
	}
	_ = c.conn.Close()
	// Leftovers of the agent's process group go with it.
	c.signal(syscall.SIGKILL)
	c.finish(e)
}

func (c *Client) finish(e Exit) {
	if e.Err != nil || e.Code != 0 {
		if e.Err == nil {
			e.Err = fmt.Errorf("exit status %d", e.Code)
		}
		e.Err = fmt.Errorf("%v%s", e.Err, c.stderrNote())
	}
	c.mu.Lock()
	c.exited = true
	c.exit = e
	var terms []string
	for id := range c.terms {
		terms = append(terms, id)
	}
	c.terms = map[string]bool{}
	c.mu.Unlock()
	c.settleAll(Settled{Reason: SettledExited}, false)
	c.cancel()
	for _, id := range terms {
		if err := c.o.Terminals.Release(id); err != nil {
			c.log.Debug("acp: release terminal", "id", id, "error", err)
		}
	}
	c.closeFS()
	c.events.push(func() { c.h.Exited(e) })
	c.events.close()
	close(c.done)
}

func (c *Client) closeFS() {
	if c.fs != nil {
		c.fs.close()
	}
}

// readStderr logs the agent's stderr line by line and keeps its tail for
// error messages.
func (c *Client) readStderr(f io.ReadCloser) {
	defer close(c.stderrDone)
	defer f.Close()
	s := newLineStream(f, nopWriteCloser{}, c.log, 64<<10)
	for {
		line, err := s.readLine()
		if len(line) > 0 {
			text := strings.TrimRight(string(line), "\r")
			// What an agent prints may quote the person's prompt or
			// screen: logged with --debug only (the tail is kept for errors).
			c.log.Debug(text, "stream", "stderr")
			c.mu.Lock()
			c.stderr.add(text)
			c.mu.Unlock()
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			return
		}
	}
}

// stderrNote is "; stderr: …" with the agent's last stderr lines, or "".
func (c *Client) stderrNote() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.stderr.String(); s != "" {
		return "; stderr: " + s
	}
	return ""
}

// tail keeps the last few lines of a stream.
type tail struct{ lines []string }

func (t *tail) add(s string) {
	const keep = 8
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	t.lines = append(t.lines, s)
	if len(t.lines) > keep {
		t.lines = t.lines[len(t.lines)-keep:]
	}
}

func (t *tail) String() string { return strings.Join(t.lines, " | ") }

type nopWriteCloser struct{}

func (nopWriteCloser) Write(b []byte) (int, error) { return len(b), nil }
func (nopWriteCloser) Close() error                { return nil }

// slogPrintf routes jsonrpc2's own log lines to the client's log.
type slogPrintf struct{ l *slog.Logger }

func (s slogPrintf) Printf(format string, v ...any) {
	s.l.Warn(strings.TrimSpace(fmt.Sprintf(format, v...)))
}

func envLookup(env []string, key string) (string, bool) { return program.Getenv(env, key) }

func envValue(env []string, key string) string {
	v, _ := envLookup(env, key)
	return v
}

package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/sessions/program"
)

// TerminalHost runs the commands an agent asks for with terminal/*. The
// Client checks the request first (cwd confined to the session folder)
// and releases, when the agent exits, every terminal it did not release.
// Methods may be called concurrently; WaitForExit blocks.
type TerminalHost interface {
	Create(ctx context.Context, req TerminalRequest) (id string, err error)
	Output(id string) (TerminalOutput, error)
	WaitForExit(ctx context.Context, id string) (TerminalExit, error)
	Kill(id string) error
	Release(id string) error
}

// TerminalRequest is a terminal/create, checked.
type TerminalRequest struct {
	SessionID string
	// Command and Args as the agent sent them. Agents send a whole shell
	// command line in Command with no Args (Claude Code ACP does); a host
	// should then run it with a shell.
	Command string
	Args    []string
	// Env holds the variables the agent added, as KEY=VALUE.
	Env []string
	// Cwd is absolute and inside the session folder (the folder itself
	// when the agent named none).
	Cwd string
	// OutputByteLimit, when > 0, is how many bytes of output to keep (the
	// newest; cut at a character boundary).
	OutputByteLimit int
}

// TerminalOutput is terminal/output's answer.
type TerminalOutput struct {
	Output    string
	Truncated bool
	Exit      *TerminalExit // nil while the command runs
}

// TerminalExit is how a terminal's command ended.
type TerminalExit struct {
	ExitCode *int
	Signal   string // e.g. "SIGKILL"; empty when it exited normally
}

// ErrUnknownTerminal is returned for a terminal id the host does not know.
var ErrUnknownTerminal = errors.New("acp: no such terminal")

// serveTerminal answers terminal/* through Options.Terminals.
func (c *Client) serveTerminal(id jsonrpc2.ID, method string, params json.RawMessage) {
	host := c.o.Terminals
	var ref struct {
		TerminalID string `json:"terminalId"`
	}
	_ = json.Unmarshal(params, &ref)
	var (
		result any
		err    error
	)
	switch method {
	case sdk.ClientMethodTerminalCreate:
		var req sdk.CreateTerminalRequest
		if err = json.Unmarshal(params, &req); err != nil {
			break
		}
		var tr TerminalRequest
		if tr, err = c.terminalRequest(req); err != nil {
			break
		}
		var tid string
		if tid, err = host.Create(c.ctx, tr); err == nil {
			c.mu.Lock()
			if c.exited {
				c.mu.Unlock()
				_ = host.Release(tid)
				err = ErrExited
				break
			}
			c.terms[tid] = true
			c.mu.Unlock()
			c.log.Debug("acp: terminal created", "id", tid, "command", tr.Command, "args", tr.Args, "cwd", tr.Cwd)
			result = sdk.CreateTerminalResponse{TerminalId: tid}
		}
	case sdk.ClientMethodTerminalOutput:
		if err = c.ownTerminal(ref.TerminalID); err != nil {
			break
		}
		var out TerminalOutput
		if out, err = host.Output(ref.TerminalID); err == nil {
			result = sdk.TerminalOutputResponse{Output: out.Output, Truncated: out.Truncated, ExitStatus: exitStatus(out.Exit)}
		}
	case sdk.ClientMethodTerminalWaitForExit:
		if err = c.ownTerminal(ref.TerminalID); err != nil {
			break
		}
		var ex TerminalExit
		if ex, err = host.WaitForExit(c.ctx, ref.TerminalID); err == nil {
			r := sdk.WaitForTerminalExitResponse{ExitCode: ex.ExitCode}
			if ex.Signal != "" {
				r.Signal = &ex.Signal
			}
			result = r
		}
	case sdk.ClientMethodTerminalKill:
		if err = c.ownTerminal(ref.TerminalID); err == nil {
			err = host.Kill(ref.TerminalID)
			result = sdk.KillTerminalResponse{}
		}
	case sdk.ClientMethodTerminalRelease:
		if err = c.ownTerminal(ref.TerminalID); err == nil {
			c.mu.Lock()
			delete(c.terms, ref.TerminalID)
			c.mu.Unlock()
			err = host.Release(ref.TerminalID)
			result = sdk.ReleaseTerminalResponse{}
		}
	}
	if err == nil {
		c.reply(id, result, nil)
		return
	}
	code := int64(jsonrpc2.CodeInternalError)
	if errors.Is(err, errOutside) || errors.Is(err, ErrUnknownTerminal) {
		code = jsonrpc2.CodeInvalidParams
	}
	c.log.Info("acp: "+method+" failed", "error", err)
	c.reply(id, nil, &jsonrpc2.Error{Code: code, Message: method + ": " + err.Error()})
}

// ownTerminal refuses ids this agent did not create (or released).
func (c *Client) ownTerminal(id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.terms[id] {
		return fmt.Errorf("%w: %q", ErrUnknownTerminal, id)
	}
	return nil
}

// terminalRequest checks a terminal/create: the cwd must be inside the
// session folder (symlinks resolved).
func (c *Client) terminalRequest(req sdk.CreateTerminalRequest) (TerminalRequest, error) {
	if req.Command == "" {
		return TerminalRequest{}, errors.New("empty command")
	}
	tr := TerminalRequest{SessionID: string(req.SessionId), Command: req.Command, Args: req.Args, Cwd: c.cwd}
	if req.OutputByteLimit != nil {
		tr.OutputByteLimit = *req.OutputByteLimit
	}
	for _, e := range req.Env {
		tr.Env = append(tr.Env, e.Name+"="+e.Value)
	}
	if req.Cwd != nil && *req.Cwd != "" {
		dir := *req.Cwd
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(c.cwd, dir)
		}
		dir = filepath.Clean(dir)
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return TerminalRequest{}, err
		}
		base, err := filepath.EvalSymlinks(c.cwd)
		if err != nil {
			return TerminalRequest{}, err
		}
		if r, err := filepath.Rel(base, real); err != nil || r == ".." || len(r) > 2 && r[:3] == "../" {
			return TerminalRequest{}, fmt.Errorf("cwd %s is %w %s", *req.Cwd, errOutside, c.cwd)
		}
		tr.Cwd = dir
	}
	return tr, nil
}

func exitStatus(e *TerminalExit) *sdk.TerminalExitStatus {
	if e == nil {
		return nil
	}
	s := &sdk.TerminalExitStatus{ExitCode: e.ExitCode}
	if e.Signal != "" {
		sig := e.Signal
		s.Signal = &sig
	}
	return s
}

// ExecTerminals is a TerminalHost that runs each command with os/exec,
// without a PTY, output (stdout and stderr together) kept in memory. A
// command with no Args runs as "/bin/sh -c Command". agentd may replace
// it with one backed by its PTY sessions.
type ExecTerminals struct {
	// Env is the base environment of every command (nil: os.Environ()).
	Env []string

	mu    sync.Mutex
	seq   int
	terms map[string]*execTerm
}

type execTerm struct {
	cmd  *exec.Cmd
	done chan struct{}
	exit TerminalExit

	mu        sync.Mutex
	out       []byte
	limit     int
	truncated bool
}

func (t *execTerm) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.out = append(t.out, b...)
	if t.limit > 0 && len(t.out) > t.limit {
		cut := len(t.out) - t.limit
		for cut < len(t.out) && !utf8.RuneStart(t.out[cut]) {
			cut++
		}
		t.out = append(t.out[:0], t.out[cut:]...)
		t.truncated = true
	}
	return len(b), nil
}

// Create starts the command.
func (h *ExecTerminals) Create(_ context.Context, req TerminalRequest) (string, error) {
	argv := append([]string{req.Command}, req.Args...)
	if len(req.Args) == 0 {
		argv = []string{"/bin/sh", "-c", req.Command}
	}
	env := h.Env
	if env == nil {
		env = os.Environ()
	}
	t := &execTerm{done: make(chan struct{}), limit: req.OutputByteLimit}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = req.Cwd
	cmd.Env = append(append([]string(nil), env...), req.Env...)
	cmd.Stdout, cmd.Stderr = t, t
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A background child that keeps the output open does not hold up the
	// exit status for long.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return "", err
	}
	t.cmd = cmd
	go func() {
		_ = cmd.Wait()
		st := cmd.ProcessState
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.exit.Signal = program.SignalName(ws.Signal())
		} else {
			code := st.ExitCode()
			t.exit.ExitCode = &code
		}
		close(t.done)
	}()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.terms == nil {
		h.terms = map[string]*execTerm{}
	}
	h.seq++
	id := "term-" + strconv.Itoa(h.seq)
	h.terms[id] = t
	return id, nil
}

func (h *ExecTerminals) get(id string) (*execTerm, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.terms[id]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTerminal, id)
	}
	return t, nil
}

// Output is the output so far, and the exit once the command ended.
func (h *ExecTerminals) Output(id string) (TerminalOutput, error) {
	t, err := h.get(id)
	if err != nil {
		return TerminalOutput{}, err
	}
	var exit *TerminalExit
	select {
	case <-t.done:
		e := t.exit
		exit = &e
	default:
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return TerminalOutput{Output: string(t.out), Truncated: t.truncated, Exit: exit}, nil
}

// WaitForExit waits for the command to end.
func (h *ExecTerminals) WaitForExit(ctx context.Context, id string) (TerminalExit, error) {
	t, err := h.get(id)
	if err != nil {
		return TerminalExit{}, err
	}
	select {
	case <-t.done:
		return t.exit, nil
	case <-ctx.Done():
		return TerminalExit{}, ctx.Err()
	}
}

// Kill ends the command's process group; the terminal stays readable.
func (h *ExecTerminals) Kill(id string) error {
	t, err := h.get(id)
	if err != nil {
		return err
	}
	select {
	case <-t.done:
	default:
		_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	}
	return nil
}

// Release kills the command if it still runs and forgets the terminal.
func (h *ExecTerminals) Release(id string) error {
	if err := h.Kill(id); err != nil {
		return err
	}
	h.mu.Lock()
	delete(h.terms, id)
	h.mu.Unlock()
	return nil
}

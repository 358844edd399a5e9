package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os/exec"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/rpc/protocol"
)

// agentdProc is a running `agentd --stdio` with the notifications it sent,
// each stamped with its arrival time.
type agentdProc struct {
	cmd  *exec.Cmd
	conn *jsonrpc2.Conn

	mu     sync.Mutex
	notes  []note
	parsed []timedState // the session/state notes, decoded as they arrive
	wake   chan struct{}
}

type note struct {
	Method string
	Params json.RawMessage
	At     time.Time
}

// question is the state's prompt's question, or "".
func (s timedState) question() string {
	if s.Prompt == nil {
		return ""
	}
	return s.Prompt.Question
}

// startAgentd runs the built agentd with --stdio and extra flags, and
// initializes it.
func (b *bench) startAgentd(extra ...string) (*agentdProc, error) {
	return b.startAgentdBinary(b.agentd, extra...)
}

// startAgentdBinary is startAgentd for another build of agentd: the pump
// section runs an older revision beside this tree's.
func (b *bench) startAgentdBinary(bin string, extra ...string) (*agentdProc, error) {
	return startProgram(bin, append([]string{"--stdio", "--private"}, extra...), nil)
}

// startClient runs the built agentd with args (and env, when not nil) as an
// editor would, and initializes it.
func (b *bench) startClient(args, env []string) (*agentdProc, error) {
	return startProgram(b.agentd, args, env)
}

// startProgram runs the agentd binary bin with args (and env, when not
// nil) and initializes it.
func startProgram(bin string, args, env []string) (*agentdProc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &agentdProc{cmd: cmd, wake: make(chan struct{}, 1)}
	p.conn = jsonrpc2.NewConn(context.Background(), protocol.NewStream(out, in, in),
		jsonrpc2.HandlerWithError(p.handle), jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	if err := p.call(protocol.MethodInitialize, protocol.InitializeParams{ClientInfo: &protocol.ClientInfo{Name: "agentd-bench"}}, nil); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

func (p *agentdProc) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	if req.Params == nil {
		return nil, nil
	}
	at := time.Now()
	n := note{Method: req.Method, Params: append(json.RawMessage(nil), *req.Params...), At: at}
	var st protocol.StateNotification
	isState := n.Method == protocol.NoteState && json.Unmarshal(n.Params, &st) == nil
	p.mu.Lock()
	p.notes = append(p.notes, n)
	if isState {
		p.parsed = append(p.parsed, timedState{StateNotification: st, At: at})
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return nil, nil
}

func (p *agentdProc) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.conn.Call(ctx, method, params, result); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// spawn starts a session and returns its id.
func (p *agentdProc) spawn(params map[string]any) (string, error) {
	var r protocol.Session
	if err := p.call(protocol.MethodSpawn, params, &r); err != nil {
		return "", err
	}
	return r.SessionID, nil
}

// states returns one session's state notifications with their arrival times.
func (p *agentdProc) states(sessionID string) []timedState {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []timedState
	for _, s := range p.parsed {
		if s.SessionID == sessionID {
			out = append(out, s)
		}
	}
	return out
}

type timedState struct {
	protocol.StateNotification
	At time.Time
}

// waitState waits until the session has reported state (e.g. "exited").
func (p *agentdProc) waitState(sessionID, state string, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		for _, s := range p.states(sessionID) {
			if s.State == state {
				return nil
			}
		}
		select {
		case <-p.wake:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			return fmt.Errorf("session %s: no %q within %s", sessionID, state, timeout)
		}
	}
}

// waitPrompt waits until the session has been told blocked on question.
func (p *agentdProc) waitPrompt(sessionID, question string, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		for _, s := range p.states(sessionID) {
			if s.State == "blocked" && s.question() == question {
				return nil
			}
		}
		select {
		case <-p.wake:
		case <-deadline:
			return fmt.Errorf("session %s: not blocked on %q within %s", sessionID, question, timeout)
		}
	}
}

func (p *agentdProc) pid() int { return p.cmd.Process.Pid }

// close ends agentd (closing stdin ends it and its sessions) and waits.
func (p *agentdProc) close() {
	_ = p.conn.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

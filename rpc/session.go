package rpc

import (
	"context"
	"errors"
	"fmt"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/acp"
	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// authRequired is the spawn error for an ACP agent that wants a login: it
// names the agent and carries the ways it offers, for the editor to offer.
func authRequired(e *acp.AuthRequiredError) *jsonrpc2.Error {
	je := &jsonrpc2.Error{Code: protocol.CodeAuthRequired,
		Message: fmt.Sprintf(protocol.MethodSpawn+": %s needs you to log in (%s); spawn again with authMethod, one of %q", e.Who(), e.Message, e.MethodIDs())}
	je.SetError(protocol.AuthRequiredData{AgentInfo: protocol.ACPAgentInfo{Name: e.Agent.Name, Title: e.Agent.Title, Version: e.Agent.Version},
		Message: e.Message, AuthMethods: wireAuthMethods(e.Methods)}) // never null: [] where it offers none
	return je
}

func (s *Server) spawn(_ context.Context, c *clientConn, p protocol.SpawnParams) (*protocol.Session, error) {
	switch p.Protocol {
	case "", "pty", "acp":
	default:
		return nil, &jsonrpc2.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf(protocol.MethodSpawn+": params.protocol %q: want \"pty\" or \"acp\"", p.Protocol)}
	}
	env, cwd := c.spawnEnv()
	if p.Cwd == "" {
		p.Cwd = cwd
	}
	sess, err := s.mgr.Spawn(sessions.SpawnSpec{Argv: p.Argv, Cwd: p.Cwd, BaseEnv: env, Env: p.Env, Cols: p.Cols, Rows: p.Rows,
		Agent: p.Agent, Name: p.Name, Hooks: p.Hooks, ACP: p.Protocol == "acp", AuthMethod: p.AuthMethod, Origin: c.origin()})
	var auth *acp.AuthRequiredError
	switch {
	case err == sessions.ErrShuttingDown:
		return nil, err
	case errors.As(err, &auth):
		return nil, authRequired(auth)
	case err != nil:
		return nil, &jsonrpc2.Error{Code: protocol.CodeSpawnFailed, Message: protocol.MethodSpawn + ": " + err.Error()}
	}
	s.log.Info("session started", "session", sess.ID, "agent", sess.Info().Agent, "pid", sess.Pid, "client", c.id)
	s.poke()
	return ref(toSession(sess.Info())), nil
}

func (s *Server) list(context.Context, *clientConn, noParams) (*protocol.ListResult, error) {
	res := protocol.ListResult{Sessions: []protocol.Session{}}
	for _, sess := range s.mgr.List() {
		res.Sessions = append(res.Sessions, toSession(sess.Info()))
	}
	return &res, nil
}

func (s *Server) read(_ context.Context, c *clientConn, sess *sessions.Session, p protocol.SessionRef) (*protocol.ReadResult, error) {
	sc, rev, err := sess.Screen()
	if err != nil {
		return nil, err // an ACP session has no screen
	}
	return &protocol.ReadResult{Rows: sc.Lines, Cursor: protocol.Cursor{Row: sc.CursorRow, Col: sc.CursorCol, Visible: sc.CursorVisible}, Title: sc.Title, Revision: rev}, nil
}

func (s *Server) resize(_ context.Context, c *clientConn, sess *sessions.Session, p protocol.ResizeParams) (none, error) {
	if err := sess.Resize(p.Cols, p.Rows); err != nil && err != sessions.ErrExited {
		return nil, &jsonrpc2.Error{Code: protocol.CodeInvalidParams, Message: protocol.MethodResize + ": " + err.Error()}
	} else if err != nil {
		return nil, err
	}
	return nil, nil
}

func (s *Server) input(_ context.Context, c *clientConn, sess *sessions.Session, p protocol.InputParams) (none, error) {
	return nil, sess.Input(p.Data)
}

func (s *Server) subscribe(_ context.Context, c *clientConn, sess *sessions.Session, p protocol.SubscribeParams) (none, error) {
	if p.Output {
		return nil, c.watch(sess) // an ACP session has no output to watch
	}
	c.unwatch(sess)
	return nil, nil
}

func (s *Server) seen(_ context.Context, c *clientConn, sess *sessions.Session, p protocol.SessionRef) (none, error) {
	sess.Seen()
	if s.desktop != nil {
		s.desktop.Seen(sess.ID) // the person looked: their notice goes
	}
	return nil, nil
}

func (s *Server) kill(_ context.Context, c *clientConn, sess *sessions.Session, p protocol.KillParams) (none, error) {
	sig, err := sessions.ParseSignal(p.Signal)
	if err != nil {
		return nil, &jsonrpc2.Error{Code: protocol.CodeInvalidParams, Message: protocol.MethodKill + ": " + err.Error()}
	}
	return nil, sess.Signal(sig)
}

func (s *Server) classify(_ context.Context, c *clientConn, sess *sessions.Session, p protocol.SessionRef) (*protocol.ClassifyResult, error) {
	v, err := sess.Classify()
	if err != nil {
		return nil, err
	}
	return &protocol.ClassifyResult{Agent: v.Agent, State: v.State, Outcome: v.Outcome, Reason: v.Reason, Evidence: wireEvidence(v.Evidence), Prompt: wirePrompt(v.Prompt)}, nil
}

// capture is one screen of the session as a file a person can attach to a
// bug report (sessions.ScreenRecord): `agentd capture` writes it.
func (s *Server) capture(_ context.Context, c *clientConn, sess *sessions.Session, p protocol.SessionRef) (*sessions.ScreenRecord, error) {
	rec, err := sess.Capture("asked for by a client")
	if err != nil {
		return nil, err
	}
	return &rec, nil
}

func (s *Server) prompt(_ context.Context, c *clientConn, sess *sessions.Session, p protocol.PromptParams) (none, error) {
	return nil, sess.Prompt(p.Text)
}

func (s *Server) cancel(_ context.Context, c *clientConn, sess *sessions.Session, p protocol.SessionRef) (none, error) {
	return nil, sess.Cancel()
}

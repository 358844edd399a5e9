package rpc

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

func (s *Server) initialize(_ context.Context, c *clientConn, p protocol.InitializeParams) (*protocol.InitializeResult, error) {
	c.mu.Lock()
	if p.ClientInfo != nil {
		c.name = p.ClientInfo.Name
		c.background = p.ClientInfo.Background
	}
	c.folders = p.WorkspaceFolders
	warnings := append([]string(nil), c.warnings...)
	c.mu.Unlock()
	if p.ClientInfo != nil {
		s.log.Info("editor connected", "client", c.id, "name", p.ClientInfo.Name, "version", p.ClientInfo.Version, "background", p.ClientInfo.Background)
		if p.ClientInfo.Background {
			s.poke() // the idle timer may run now
		}
	}
	res := protocol.InitializeResult{ServerInfo: protocol.ClientInfo{Name: "agentd", Version: s.cfg.Version}, ProtocolVersion: protocol.ProtocolVersion,
		Agents: []protocol.AgentInfo{}, Daemon: s.daemonInfo(), Warnings: warnings}
	for _, m := range s.mgr.Rules().Manifests() {
		res.Agents = append(res.Agents, protocol.AgentInfo{Name: m.Name, Display: m.Display, Process: m.Identify.Process})
	}
	return &res, nil
}

// daemonInfo describes this agentd process.
func (s *Server) daemonInfo() protocol.Daemon {
	s.mu.Lock()
	rec := s.lastUpgrade
	s.mu.Unlock()
	return protocol.Daemon{Version: s.cfg.Version, ProtocolVersion: protocol.ProtocolVersion, Pid: os.Getpid(),
		Instance: s.instance, Socket: s.cfg.Socket,
		StartedAt: stamp(s.started), Private: s.cfg.Private, LastUpgrade: rec}
}

// shutdown: in private mode it ends every session, as the client's leaving
// will. A daemon's client only says it is going: its sessions are the
// person's, not the window's. The client then sends exit.
func (s *Server) shutdown(context.Context, *clientConn, noParams) (none, error) {
	if s.cfg.Private {
		s.mgr.Shutdown()
	}
	return nil, nil
}

// exit closes the client's connection (Serve returns); it is never
// answered.
func (s *Server) exit(_ context.Context, c *clientConn, _ noParams) (none, error) {
	c.exitOnce.Do(func() { close(c.exit) })
	return nil, nil
}

// hello is the first request of a forwarder or the CLI on the daemon's
// socket: its version, its folder and the environment its sessions run in.
func (s *Server) hello(_ context.Context, c *clientConn, p protocol.HelloParams) (*protocol.HelloResult, error) {
	res := protocol.HelloResult{Daemon: s.daemonInfo()}
	if p.Version != "" && p.Version != s.cfg.Version && p.ProtocolVersion == protocol.ProtocolVersion {
		res.Warnings = append(res.Warnings, versionWarning(s.cfg.Version, p.Version))
	}
	c.mu.Lock()
	c.cwd = p.Cwd
	if p.Env != nil {
		c.env = append([]string(nil), p.Env...)
	}
	c.warnings = res.Warnings
	if p.CooldownMs > 0 {
		c.attention = sessions.NewAttention(time.Duration(p.CooldownMs) * time.Millisecond)
	}
	c.mu.Unlock()
	s.log.Info("client said hello", "client", c.id, "version", p.Version, "pid", p.Pid)
	return &res, nil
}

// stopDaemon is agentd stop: without force it refuses while agents run,
// naming them; with force it ends them. The reply goes out first, then
// the server ends (methodTable runs Stop after it).
func (s *Server) stopDaemon(_ context.Context, c *clientConn, p protocol.StopParams) (none, error) {
	var live []string
	for _, sess := range s.mgr.List() {
		if in := sess.Info(); in.Exit == nil {
			live = append(live, fmt.Sprintf("%s (%s, %s)", in.ID, in.Name, in.State.Name))
		}
	}
	if len(live) > 0 && !p.Force {
		e := &jsonrpc2.Error{Code: protocol.CodeSessionsRunning, Message: fmt.Sprintf("%s: %d session(s) still run: %s; `agentd stop --force` ends them", protocol.MethodStop, len(live), strings.Join(live, ", "))}
		e.SetError(map[string]any{"sessions": live})
		return nil, e
	}
	s.log.Info("stop requested", "client", c.id, "force", p.Force, "sessions", len(live))
	return nil, nil
}

// Stop ends the server: it is stopping once this returns, and whoever
// serves (Serve, Run) ends every session and returns.
func (s *Server) Stop() { s.stopOnce.Do(func() { close(s.stop) }) }

// versionWarning is what a client of version theirs is told by a daemon of
// version ours, when they differ but speak the same protocol.
func versionWarning(ours, theirs string) string {
	head := fmt.Sprintf("the agentd daemon (pid %d) is version %s and this agentd is %s; they speak the same protocol, so this works", os.Getpid(), ours, theirs)
	switch protocol.CompareVersions(theirs, ours) {
	case 1:
		return head + "; `agentd upgrade` hands the daemon's sessions to this newer agentd, and their agents run on"
	case -1:
		return head + "; the daemon is the newer"
	}
	return head + "; `agentd upgrade` hands the daemon's sessions to this build, and their agents run on"
}

package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/agentd/agentd/rpc/notices"
	"github.com/agentd/agentd/rpc/protocol"
)

// Run serves the per-user daemon: every connection ln accepts is a client,
// and sessions outlive their clients. Meanwhile it follows the sessions of
// config.toml's other hosts for the desktop notices. It returns when Stop
// is called, ctx ends, or idle passes with no client connected (but
// background ones) and no session running (0: never); by then every
// session has ended and every client was told.
func (s *Server) Run(ctx context.Context, ln *net.UnixListener, idle time.Duration) error {
	accepted := make(chan error, 1)
	go func() { accepted <- s.accept(ctx, ln) }()
	hostsCtx, stopHosts := context.WithCancel(ctx)
	defer stopHosts()
	if !s.cfg.Private {
		s.hosts.Store(notices.FollowHosts(hostsCtx, s.desktop, s.cfg.Desktop, s.cfg.Hosts, s.cfg.Version, s.desktopView, s.log))
	}
	reason := s.waitIdle(ctx, idle, accepted)
	stopHosts()
	s.log.Info("daemon ending", "why", reason, "sessions", s.mgr.Live(), "clients", s.Clients())
	_ = ln.Close()
	s.mgr.Shutdown()
	s.commands.Close()
	s.desktop.Close()
	for _, c := range s.clientList() {
		s.dropClient(c, true)
	}
	return nil
}

// waitIdle returns why the daemon ends.
func (s *Server) waitIdle(ctx context.Context, idle time.Duration, accepted <-chan error) string {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var expired <-chan time.Time
		if timer != nil {
			timer.Stop()
			timer = nil
		}
		if idle > 0 && s.holdingClients() == 0 && s.mgr.Live() == 0 {
			timer = time.NewTimer(idle)
			expired = timer.C
		}
		select {
		case <-s.changed:
		case <-expired:
			if s.holdingClients() == 0 && s.mgr.Live() == 0 { // a client may have come as it fired
				return fmt.Sprintf("idle for %s with no client (but background ones) and no session", idle)
			}
		case <-s.stop:
			return "stop requested"
		case <-ctx.Done():
			return "context ended"
		case err := <-accepted:
			return "listener failed: " + err.Error()
		}
	}
}

// accept takes connections until ln is closed.
func (s *Server) accept(ctx context.Context, ln *net.UnixListener) error {
	uid := os.Getuid()
	for {
		nc, err := ln.AcceptUnix()
		if err != nil {
			return err // Run reads it unless it closed ln itself
		}
		peer, err := PeerOf(nc)
		if err != nil || peer.Uid != uid {
			s.refuse(nc, peer, err)
			continue
		}
		go s.serveConn(ctx, nc, peer)
	}
}

// refuse turns away a connection from another user (possible only where
// the socket's folder was opened up by hand), telling them why in answer
// to their first request, and logs it.
func (s *Server) refuse(nc *net.UnixConn, peer Peer, err error) {
	if err != nil {
		s.log.Warn("refused a connection: cannot read its peer's credentials", "err", err)
	} else {
		s.log.Warn("refused a connection from another user", "uid", peer.Uid, "pid", peer.Pid, "serves", os.Getuid())
	}
	go func() {
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(2 * time.Second))
		id := json.RawMessage("null")
		if body, err := protocol.ReadMessage(bufio.NewReaderSize(io.LimitReader(nc, protocol.MaxMessage), 4096)); err == nil {
			var req struct{ ID json.RawMessage }
			if json.Unmarshal(body, &req) == nil && len(req.ID) > 0 {
				id = req.ID
			}
		}
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
			"code": protocol.CodeInvalidRequest, "message": "agentd: this daemon serves uid " + strconv.Itoa(os.Getuid()) + " only"}})
		_ = protocol.WriteMessage(nc, msg)
	}()
}

// serveConn serves one client of the daemon until it leaves or says exit.
func (s *Server) serveConn(ctx context.Context, nc *net.UnixConn, peer Peer) {
	c := s.newClient(ctx, protocol.NewStream(nc, nc, nc))
	s.log.Info("client connected", "client", c.id, "pid", peer.Pid)
	select {
	case <-c.conn.DisconnectNotify():
	case <-c.exit:
	case <-ctx.Done():
	}
	s.log.Info("client left", "client", c.id)
	s.dropClient(c, true)
}

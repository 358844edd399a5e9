package rpc

import (
	"context"
	"fmt"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// Settled says the code before stopped watching: this code keeps the
// sessions now.
func (s *Server) Settled() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastUpgrade != nil {
		rec := *s.lastUpgrade
		rec.Settling = false
		s.lastUpgrade = &rec
	}
}

// ServerSnapshot is the server's part of a handover: the sessions, and
// what makes this the same daemon to its clients (its instance).
type ServerSnapshot struct {
	Started  time.Time          `json:"started"`
	Instance string             `json:"instance,omitempty"`
	Sessions *sessions.Snapshot `json:"sessions"`
}

// Freeze stops every session for a handover (sessions.Manager.Freeze).
func (s *Server) Freeze() (ServerSnapshot, []int, func(), error) {
	snap, fds, thaw, err := s.mgr.Freeze()
	if err != nil {
		return ServerSnapshot{}, nil, nil, err
	}
	return ServerSnapshot{Started: s.started, Instance: s.instance, Sessions: snap}, fds, thaw, nil
}

// CheckSnapshot says whether this binary can adopt snap, changing nothing.
func (s *Server) CheckSnapshot(snap ServerSnapshot) error {
	if snap.Sessions == nil {
		return fmt.Errorf("the handover carries no sessions")
	}
	return sessions.CheckSnapshot(s.mgr.Rules(), snap.Sessions)
}

// Adopt takes over the sessions of a handover and becomes the same
// daemon instance to clients that reconnect.
func (s *Server) Adopt(snap ServerSnapshot, rec protocol.UpgradeRecord) error {
	if !snap.Started.IsZero() {
		s.started = snap.Started
	}
	if snap.Instance != "" {
		s.instance = snap.Instance
	}
	err := s.mgr.Adopt(snap.Sessions)
	if at, perr := time.Parse(time.RFC3339Nano, rec.At); perr == nil {
		rec.PausedMs = time.Since(at).Milliseconds()
	}
	s.mu.Lock()
	s.lastUpgrade = &rec
	s.mu.Unlock()
	return err
}

// upgrade hands over to the binary named, through Config.Upgrade. It
// returns only when the handover did not happen.
func (s *Server) upgrade(_ context.Context, c *clientConn, p protocol.UpgradeParams) (none, error) {
	if s.cfg.Upgrade == nil || s.cfg.Private {
		return nil, &jsonrpc2.Error{Code: protocol.CodeNotSupported, Message: protocol.MethodUpgrade + ": only the per-user daemon hands over its sessions"}
	}
	s.log.Info("upgrade requested", "client", c.id, "binary", p.Binary, "auto", p.Auto)
	err := s.cfg.Upgrade(p)
	s.log.Warn("upgrade refused; the sessions run on here", "binary", p.Binary, "err", err)
	return nil, &jsonrpc2.Error{Code: protocol.CodeUpgradeRefused, Message: fmt.Sprintf("%s: %v; every session runs on under this daemon (version %s)", protocol.MethodUpgrade, err, s.cfg.Version)}
}

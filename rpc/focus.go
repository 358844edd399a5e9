package rpc

import (
	"context"

	"github.com/agentd/agentd/rpc/notices"
	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// focus is client/focus: the client tells whether the person is looking
// at it, and whether its settings want desktop notices at all.
func (s *Server) focus(_ context.Context, c *clientConn, p protocol.FocusParams) (none, error) {
	c.mu.Lock()
	c.focused = p.Focused
	if p.DesktopNotifications != nil {
		c.desktopOff = !*p.DesktopNotifications
	}
	off := c.desktopOff
	c.mu.Unlock()
	s.log.Info("client focus", "client", c.id, "focused", p.Focused, "desktopNotifications", !off)
	return nil, nil
}

// desktopView is what the clients connected now say about desktop
// notices: how many are focused, and whether one turned them off. A
// client that has gone counts as neither.
func (s *Server) desktopView() notices.View {
	var v notices.View
	for _, c := range s.clientList() {
		c.mu.Lock()
		if c.focused {
			v.Focused++
		}
		if c.desktopOff && !v.OptedOut {
			v.OptedOut, v.OptedOutBy = true, c.name
		}
		c.mu.Unlock()
	}
	return v
}

// newDesktop starts the desktop notices, answering from a notice through
// the same guard as runtime_answer: this machine's, or another host's
// there (notices.Hosts).
func (s *Server) newDesktop() *notices.Desktop {
	answer := func(sessionID, promptID, optionID string) (sessions.State, error) {
		if st, remote, err := s.hosts.Load().Answer(sessionID, promptID, optionID); remote {
			return st, err
		}
		sess, err := s.mgr.Get(sessionID)
		if err != nil {
			return sessions.State{}, err
		}
		return sess.Answer(promptID, optionID, "")
	}
	current := func(sessionID string) (sessions.Info, bool) {
		if info, ok, remote := s.hosts.Load().Current(sessionID); remote {
			return info, ok
		}
		sess, err := s.mgr.Get(sessionID)
		if err != nil {
			return sessions.Info{}, false
		}
		return sess.Info(), true
	}
	return notices.NewDesktop(s.cfg.Desktop, s.cfg.Cooldown, s.log, answer, current)
}

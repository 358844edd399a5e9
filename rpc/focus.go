package rpc

import (
	"context"
	"fmt"

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
func (s *Server) desktopView() desktopView {
	var v desktopView
	for _, c := range s.clientList() {
		c.mu.Lock()
		if c.focused {
			v.focused++
		}
		if c.desktopOff && !v.optedOut {
			v.optedOut, v.optedOutBy = true, c.name
		}
		c.mu.Unlock()
	}
	return v
}

// newDesktop starts the desktop notifier with the OS's service (open),
// answering from a notice through the same guard as runtime_answer.
func (s *Server) newDesktop(open func(desktopEvents) (desktopBackend, error)) *desktopNotifier {
	answer := func(sessionID, promptID, optionID string) (sessions.State, error) {
		if host, id, remote := remoteKey(sessionID); remote {
			f := s.hostFeed(host)
			if f == nil {
				return sessions.State{}, fmt.Errorf("host %s is not followed", host)
			}
			return f.answer(id, promptID, optionID)
		}
		sess, err := s.mgr.Get(sessionID)
		if err != nil {
			return sessions.State{}, err
		}
		return sess.Answer(promptID, optionID, "")
	}
	current := func(sessionID string) (sessions.Info, bool) {
		if host, id, remote := remoteKey(sessionID); remote {
			if f := s.hostFeed(host); f != nil {
				return f.current(id)
			}
			return sessions.Info{}, false
		}
		sess, err := s.mgr.Get(sessionID)
		if err != nil {
			return sessions.Info{}, false
		}
		return sess.Info(), true
	}
	return newDesktopNotifier(s.cfg.Desktop, s.cfg.Cooldown, s.log, open, answer, current)
}

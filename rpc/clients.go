package rpc

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// clientConn is one client of the server: an editor window, a Neovim, an
// agentd CLI command. It is a window onto the sessions, never their owner.
type clientConn struct {
	srv  *Server
	id   int
	conn *jsonrpc2.Conn
	out  *outbox

	exitOnce sync.Once
	exit     chan struct{} // closed on the exit notification

	mu        sync.Mutex
	name      string   // clientInfo.name
	folders   []string // initialize's workspaceFolders
	env       []string // from agentd/hello; nil: agentd's own
	cwd       string   // from agentd/hello
	warnings  []string // for the person, from agentd/hello: told in initialize
	attention *sessions.Attention
	watching  map[string]bool // sessions whose output this client receives
	// focused: the client says the person is looking at it (client/focus).
	focused bool
	// desktopOff: the client's setting turns desktop notices off.
	desktopOff bool
	// background: the client said it only watches (ClientInfo.Background).
	background bool
}

// connHandler routes one connection's requests to the server with the
// client they came from.
type connHandler struct{ c *clientConn }

func (h connHandler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	h.c.srv.handle(ctx, h.c, conn, req)
}

// newClient starts serving a client on st.
func (s *Server) newClient(ctx context.Context, st *protocol.Stream) *clientConn {
	s.mu.Lock()
	s.nextID++
	c := &clientConn{srv: s, id: s.nextID, exit: make(chan struct{}), attention: sessions.NewAttention(s.cfg.Cooldown), watching: map[string]bool{}}
	s.mu.Unlock()
	c.out = newOutbox(s.log)
	c.out.repaint = func(id string) string {
		if sess, err := s.mgr.Get(id); err == nil {
			return sess.Repaint(false) // the viewer has the history; it missed some output
		}
		return ""
	}
	c.conn = jsonrpc2.NewConn(ctx, st, connHandler{c}, jsonrpc2.SetLogger(slogLogger{s.log}))
	go c.out.run(ctx, c.conn)
	s.mu.Lock()
	s.clients[c] = struct{}{}
	s.mu.Unlock()
	s.poke()
	return c
}

// dropClient forgets c: its output subscriptions end, its queued
// notifications are sent (waiting at most a second when flush is set) and
// its connection is closed. Its sessions run on.
func (s *Server) dropClient(c *clientConn, flush bool) {
	s.mu.Lock()
	_, ok := s.clients[c]
	delete(s.clients, c)
	s.mu.Unlock()
	if !ok {
		return
	}
	c.mu.Lock()
	watching := c.watching
	c.watching = map[string]bool{}
	c.mu.Unlock()
	for id := range watching {
		if sess, err := s.mgr.Get(id); err == nil {
			sess.UnwatchOutput()
		}
	}
	c.out.close()
	if flush {
		select { // let the last notifications (exits) reach the client
		case <-c.out.done:
		case <-time.After(time.Second):
		}
	}
	_ = c.conn.Close()
	s.poke()
}

// clientList is every client now.
func (s *Server) clientList() []*clientConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*clientConn, 0, len(s.clients))
	for c := range s.clients {
		out = append(out, c)
	}
	return out
}

// Clients counts the clients connected now.
func (s *Server) Clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// holdingClients counts the clients that keep an idle daemon running: all
// but those that said they only watch in the background.
func (s *Server) holdingClients() int {
	n := 0
	for _, c := range s.clientList() {
		c.mu.Lock()
		if !c.background {
			n++
		}
		c.mu.Unlock()
	}
	return n
}

func (s *Server) poke() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// State implements sessions.Events: every client is told, each deciding
// its own attention.
func (s *Server) State(info sessions.Info, previous sessions.State) {
	if s.commands != nil {
		s.commands.State(info, previous)
	}
	if s.desktop != nil {
		s.desktop.State(info, previous, s.desktopView())
	}
	now := time.Now()
	for _, c := range s.clientList() {
		c.mu.Lock()
		attention := c.attention.Raise(info.ID, info.State, previous, now)
		c.mu.Unlock()
		c.out.State(info, previous, attention)
	}
}

// Output implements sessions.Events: only the clients watching the session.
func (s *Server) Output(sessionID, data string) {
	for _, c := range s.clientList() {
		if c.isWatching(sessionID) {
			c.out.Output(sessionID, data)
		}
	}
}

// Update implements sessions.Events.
func (s *Server) Update(sessionID string, update json.RawMessage) {
	for _, c := range s.clientList() {
		c.out.Update(sessionID, update)
	}
}

// Exited implements sessions.Events.
func (s *Server) Exited(sessionID string, st sessions.ExitStatus) {
	for _, c := range s.clientList() {
		c.out.Exited(sessionID, st)
		c.mu.Lock()
		c.attention.Forget(sessionID) // no notice is due for it any more
		c.mu.Unlock()
	}
	if s.desktop != nil {
		s.desktop.Exited(sessionID)
	}
	s.poke()
}

func (c *clientConn) isWatching(sessionID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.watching[sessionID]
}

// watch starts this client's output of sess with a repaint (again, if it
// watches already: a new view needs one).
func (c *clientConn) watch(sess *sessions.Session) error {
	return sess.WatchOutput(func(repaint string) bool {
		c.out.Output(sess.ID, repaint)
		c.mu.Lock()
		defer c.mu.Unlock()
		already := c.watching[sess.ID]
		c.watching[sess.ID] = true
		return !already
	})
}

func (c *clientConn) unwatch(sess *sessions.Session) {
	c.mu.Lock()
	was := c.watching[sess.ID]
	delete(c.watching, sess.ID)
	c.mu.Unlock()
	if was {
		sess.UnwatchOutput()
	}
}

// spawnEnv is the environment and folder sessions this client spawns
// start from.
func (c *clientConn) spawnEnv() ([]string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.env, c.cwd
}

func (c *clientConn) origin() sessions.Origin {
	c.mu.Lock()
	defer c.mu.Unlock()
	return sessions.Origin{Client: c.name, Folders: append([]string(nil), c.folders...)}
}

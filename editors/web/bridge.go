package web

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/rpc"
)

// DialFunc connects to the daemon; onNote receives its notifications.
type DialFunc func(ctx context.Context, onNote func(rpc.Notification)) (*rpc.Client, error)

// event is one server-sent event for a page.
type event struct {
	name string
	data []byte
}

// stream is one open page's event stream.
type stream struct {
	ch    chan event
	watch string // the session whose screen it shows, or ""
	gone  chan struct{}
	once  sync.Once
}

func (s *stream) close() { s.once.Do(func() { close(s.gone) }) }

// watch is a session's screen while at least one page shows it.
type watch struct {
	screen *screen
	pages  int
	dirty  chan struct{}
	stop   chan struct{}
}

// bridge is the page server's one connection to the daemon: the sessions
// as the daemon last told them, and the pages to tell when they change.
type bridge struct {
	dial     DialFunc
	log      *slog.Logger
	throttle time.Duration

	mu        sync.Mutex
	client    *rpc.Client
	connected bool
	lastErr   string
	sessions  map[string]rpc.Session
	streams   map[*stream]struct{}
	watches   map[string]*watch
	// pending are sessions whose state changed since the last update the
	// pages were sent: 50 busy agents change state tens of times a second,
	// and a phone needs each session's newest state, not every one.
	pending  map[string]bool
	flushing bool
}

// coalesce is how long changes gather before the pages hear of them.
const coalesce = 150 * time.Millisecond

// changed queues a session's new state for the next update.
func (b *bridge) changed(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending[id] = true
	if !b.flushing {
		b.flushing = true
		time.AfterFunc(coalesce, b.flush)
	}
}

// flush sends the pages one "update" with the sessions that changed.
func (b *bridge) flush() {
	b.mu.Lock()
	var out []pageSession
	for id := range b.pending {
		if s, ok := b.sessions[id]; ok {
			out = append(out, summary(s))
		}
	}
	b.pending = map[string]bool{}
	b.flushing = false
	b.mu.Unlock()
	if len(out) == 0 {
		return
	}
	data, _ := json.Marshal(map[string]any{"sessions": out})
	b.broadcast(func(*stream) (event, bool) { return event{name: "update", data: data}, true })
}

// pageSession is what the page shows of a session: no argv, environment
// or process ids leave the machine.
type pageSession struct {
	SessionID string         `json:"sessionId"`
	Name      string         `json:"name"`
	Agent     string         `json:"agent"`
	Cwd       string         `json:"cwd"`
	State     string         `json:"state"`
	Outcome   string         `json:"outcome,omitempty"`
	Reason    string         `json:"reason"`
	Since     string         `json:"since"`
	Prompt    *detect.Prompt `json:"prompt,omitempty"`
	Message   string         `json:"message,omitempty"`
}

func summary(s rpc.Session) pageSession {
	return pageSession{SessionID: s.SessionID, Name: s.Name, Agent: s.Agent, Cwd: s.Cwd, State: s.State,
		Outcome: s.Outcome, Reason: s.Reason, Since: s.Since, Prompt: s.Prompt, Message: s.Message}
}

func newBridge(dial DialFunc, log *slog.Logger) *bridge {
	return &bridge{dial: dial, log: log, throttle: 100 * time.Millisecond,
		sessions: map[string]rpc.Session{}, streams: map[*stream]struct{}{}, watches: map[string]*watch{}, pending: map[string]bool{}}
}

// run keeps the connection up until ctx ends: a daemon that stops and
// starts again is found again, and the pages are told meanwhile.
func (b *bridge) run(ctx context.Context, ready chan<- error) {
	first := true
	for {
		c, err := b.dial(ctx, b.note)
		if err == nil {
			b.connectedTo(ctx, c)
		}
		// Start returns once the sessions are known: a page opened at once sees them.
		if first {
			ready <- err
			first = false
		}
		if err == nil {
			select {
			case <-c.Done():
			case <-ctx.Done():
				_ = c.Close()
				return
			}
			b.log.Info("web: the daemon closed the connection")
			err = errors.New("the agentd daemon closed the connection")
		}
		b.mu.Lock()
		wasUp := b.connected
		b.client, b.connected, b.lastErr = nil, false, err.Error()
		b.mu.Unlock()
		if wasUp {
			b.broadcastDaemon()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
}

func (b *bridge) connectedTo(ctx context.Context, c *rpc.Client) {
	b.mu.Lock()
	b.client, b.connected, b.lastErr = c, true, ""
	watched := make([]string, 0, len(b.watches))
	for id := range b.watches {
		watched = append(watched, id)
	}
	b.mu.Unlock()
	b.relist(ctx)
	for _, id := range watched {
		b.subscribe(ctx, id)
	}
	b.broadcastDaemon()
}

// call is one request to the daemon, or an error saying none is connected.
func (b *bridge) call(ctx context.Context, method string, params, result any) error {
	b.mu.Lock()
	c := b.client
	b.mu.Unlock()
	if c == nil {
		return errNoDaemon
	}
	return c.Call(ctx, method, params, result)
}

var errNoDaemon = errors.New("not connected to the agentd daemon (is it running? agentd web connects again every 2 s)")

// relist replaces the sessions with session/list's and sends them to every page.
func (b *bridge) relist(ctx context.Context) {
	var res rpc.ListResult
	if err := b.call(ctx, "session/list", nil, &res); err != nil {
		b.log.Warn("web: session/list", "err", err)
		return
	}
	b.mu.Lock()
	b.sessions = map[string]rpc.Session{}
	for _, s := range res.Sessions {
		b.sessions[s.SessionID] = s
	}
	b.mu.Unlock()
	b.broadcastDaemon()
}

// list is the sessions, newest first.
func (b *bridge) list() []pageSession {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]pageSession, 0, len(b.sessions))
	for _, s := range b.sessions {
		out = append(out, summary(s))
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Since > out[j].Since || (out[i].Since == out[j].Since && out[i].SessionID < out[j].SessionID)
	})
	return out
}

func (b *bridge) snapshotEvent() event {
	b.mu.Lock()
	connected, lastErr := b.connected, b.lastErr
	b.mu.Unlock()
	data, _ := json.Marshal(map[string]any{"sessions": b.list(), "connected": connected, "error": lastErr})
	return event{name: "sessions", data: data}
}

// broadcastDaemon sends every page the sessions and the connection's state.
func (b *bridge) broadcastDaemon() {
	ev := b.snapshotEvent() // before broadcast takes the lock snapshotEvent needs
	b.broadcast(func(*stream) (event, bool) { return ev, true })
}

// note handles a daemon notification on the connection's goroutine:
// quick, and never blocking on a page.
func (b *bridge) note(n rpc.Notification) {
	switch n.Method {
	case "session/state":
		var st rpc.StateNotification
		if json.Unmarshal(n.Params, &st) != nil {
			return
		}
		b.mu.Lock()
		s, known := b.sessions[st.SessionID]
		if known {
			s.State, s.Outcome, s.StateSource, s.Reason, s.Since, s.Prompt, s.Message =
				st.State, st.Outcome, st.StateSource, st.Reason, st.Since, st.Prompt, st.Message
			b.sessions[st.SessionID] = s
		}
		b.mu.Unlock()
		if !known {
			// A session started since the last list: its name and folder come from the list.
			go b.relist(context.Background())
			return
		}
		b.changed(st.SessionID)
	case "session/exited":
		go b.relist(context.Background())
	case "session/output":
		var o rpc.OutputNotification
		if json.Unmarshal(n.Params, &o) != nil {
			return
		}
		b.mu.Lock()
		w := b.watches[o.SessionID]
		b.mu.Unlock()
		if w == nil {
			return
		}
		if o.Dropped > 0 {
			// What follows is a repaint for a blank terminal.
			w.screen.reset()
		}
		w.screen.write(o.Data)
		select {
		case w.dirty <- struct{}{}:
		default:
		}
	}
}

// broadcast sends each stream the event make gives it; a page that does
// not keep up is closed (its browser reconnects and gets a fresh snapshot).
// make runs under b.mu: it must not take it.
func (b *bridge) broadcast(make func(*stream) (event, bool)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.streams {
		ev, ok := make(s)
		if !ok {
			continue
		}
		select {
		case s.ch <- ev:
		default:
			delete(b.streams, s)
			s.close()
		}
	}
}

// open registers a page's stream, watching one session's screen when
// watchID is set. The first event is the snapshot.
func (b *bridge) open(ctx context.Context, watchID string) *stream {
	s := &stream{ch: make(chan event, 256), watch: watchID, gone: make(chan struct{})}
	s.ch <- b.snapshotEvent()
	b.mu.Lock()
	b.streams[s] = struct{}{}
	var start bool
	if watchID != "" {
		w := b.watches[watchID]
		if w == nil {
			sess := b.sessions[watchID]
			w = &watch{screen: newScreen(sess.Cols, sess.Rows), dirty: make(chan struct{}, 1), stop: make(chan struct{})}
			b.watches[watchID] = w
			start = true
			go b.pump(watchID, w)
		}
		w.pages++
	}
	b.mu.Unlock()
	if start {
		b.subscribe(ctx, watchID)
	} else if watchID != "" {
		// The screen is already drawn for other pages: this one gets it now.
		b.mu.Lock()
		w := b.watches[watchID]
		b.mu.Unlock()
		if w != nil {
			f, _ := w.screen.frame(watchID)
			data, _ := json.Marshal(f)
			select {
			case s.ch <- event{name: "screen", data: data}:
			default:
			}
		}
	}
	return s
}

// close unregisters a page's stream; the last page to leave a screen
// ends its output subscription.
func (b *bridge) close(s *stream) {
	b.mu.Lock()
	delete(b.streams, s)
	s.close()
	var stop bool
	if w := b.watches[s.watch]; s.watch != "" && w != nil {
		w.pages--
		if w.pages == 0 {
			delete(b.watches, s.watch)
			close(w.stop)
			stop = true
		}
	}
	b.mu.Unlock()
	if stop {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.call(ctx, "session/subscribe", rpc.SubscribeParams{SessionID: s.watch, Output: false}, nil)
	}
}

// subscribe starts a watched session's output: a repaint, then live bytes.
func (b *bridge) subscribe(ctx context.Context, id string) {
	b.mu.Lock()
	w := b.watches[id]
	b.mu.Unlock()
	if w == nil {
		return
	}
	w.screen.reset()
	if err := b.call(ctx, "session/subscribe", rpc.SubscribeParams{SessionID: id, Output: true}, nil); err != nil {
		msg, _ := json.Marshal(map[string]string{"sessionId": id, "error": errorMessage(err)})
		b.broadcast(func(s *stream) (event, bool) { return event{name: "screen-error", data: msg}, s.watch == id })
	}
}

// pump sends a watched screen to its pages when it changed, at most once
// per throttle: an agent redrawing its spinner 60 times a second costs
// the phone ten frames.
func (b *bridge) pump(id string, w *watch) {
	var sent uint64
	for {
		select {
		case <-w.stop:
			return
		case <-w.dirty:
		}
		f, rev := w.screen.frame(id)
		if rev != sent {
			sent = rev
			data, _ := json.Marshal(f)
			b.broadcast(func(s *stream) (event, bool) { return event{name: "screen", data: data}, s.watch == id })
		}
		select {
		case <-w.stop:
			return
		case <-time.After(b.throttle):
		}
	}
}

package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/agentd/agentd/rpc/client"
	"github.com/agentd/agentd/rpc/protocol"
)

// DialFunc connects to the daemon; onNote receives its notifications.
type DialFunc func(ctx context.Context, onNote func(client.Notification)) (*client.Client, error)

// Machine is one host of a page that shows several (agentd web --hosts):
// this machine's daemon, or another's reached over ssh.
type Machine struct {
	// Name is the host's name as config.toml's [[hosts]] gives it.
	Name string
	Dial DialFunc
	// Remote: reached over ssh, so a link that drops is tried again after
	// 1 s, then 2, 4… up to 30 s between tries (this machine's socket is
	// tried every 2 s, as without --hosts).
	Remote bool
}

// ErrNoDaemon is a DialFunc's error where the machine answers and no
// agentd daemon runs there: the page shows the host as "no daemon".
var ErrNoDaemon = errors.New("no agentd daemon runs there")

// What the page shows of each host.
const (
	hostConnecting   = "connecting"
	hostUp           = "up"
	hostReconnecting = "reconnecting"
	hostDown         = "down"
	hostNoDaemon     = "no daemon"
)

// The wait between tries on a remote host: doubling from retryMin to retryMax.
const (
	retryMin   = time.Second
	retryMax   = 30 * time.Second
	localRetry = 2 * time.Second
)

// event is one server-sent event for a page.
type event struct {
	name string
	data []byte
}

// key names a session: the same id ("s1") may be a session on two hosts,
// so everything the page server keeps is keyed by both. Without --hosts
// host is "".
type key struct{ host, id string }

// stream is one open page's event stream.
type stream struct {
	ch    chan event
	watch key // the session whose screen it shows; id "" for none
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

// hostConn is one daemon the page server is a client of, and its sessions
// as that daemon last told them.
type hostConn struct {
	name     string
	dial     DialFunc
	remote   bool
	client   *client.Client
	state    string
	lastErr  string
	retryAt  time.Time
	sessions map[string]protocol.Session
}

// bridge is the page server's connections to the daemons (one, or one per
// host with --hosts): the sessions as each last told them, and the pages
// to tell when they change.
type bridge struct {
	log      *slog.Logger
	throttle time.Duration
	// multi: several hosts (--hosts): sessions and host states carry the
	// host's name. Without it the page and its API are as they always were.
	multi  bool
	hosts  []*hostConn
	byName map[string]*hostConn

	mu      sync.Mutex
	streams map[*stream]struct{}
	watches map[key]*watch
	// pending are sessions whose state changed since the last update the
	// pages were sent: 50 busy agents change state tens of times a second,
	// and a phone needs each session's newest state, not every one.
	pending  map[key]bool
	flushing bool
}

// coalesce is how long changes gather before the pages hear of them.
const coalesce = 150 * time.Millisecond

// changed queues a session's new state for the next update.
func (b *bridge) changed(k key) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending[k] = true
	if !b.flushing {
		b.flushing = true
		time.AfterFunc(coalesce, b.flush)
	}
}

// flush sends the pages one "update" with the sessions that changed.
func (b *bridge) flush() {
	b.mu.Lock()
	var out []pageSession
	for k := range b.pending {
		if h := b.byName[k.host]; h != nil {
			if s, ok := h.sessions[k.id]; ok {
				out = append(out, summary(k.host, s))
			}
		}
	}
	b.pending = map[key]bool{}
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
	// Host is the session's host with --hosts ("" and left out without).
	Host      string           `json:"host,omitempty"`
	SessionID string           `json:"sessionId"`
	Name      string           `json:"name"`
	Agent     string           `json:"agent"`
	Cwd       string           `json:"cwd"`
	State     string           `json:"state"`
	Outcome   string           `json:"outcome,omitempty"`
	Reason    string           `json:"reason"`
	Since     string           `json:"since"`
	Prompt    *protocol.Prompt `json:"prompt,omitempty"`
	Message   string           `json:"message,omitempty"`
}

func summary(host string, s protocol.Session) pageSession {
	return pageSession{Host: host, SessionID: s.SessionID, Name: s.Name, Agent: s.Agent, Cwd: s.Cwd, State: s.State,
		Outcome: s.Outcome, Reason: s.Reason, Since: s.Since, Prompt: s.Prompt, Message: s.Message}
}

// hostInfo is a host as the page's header for its group shows it.
type hostInfo struct {
	Name  string `json:"name"`
	State string `json:"state"` // connecting, up, reconnecting, down, no daemon
	// Error is why it is not up: ssh's own words, or the connection's.
	Error string `json:"error,omitempty"`
	// RetryInMs is when it is tried again, while it is not up.
	RetryInMs int64 `json:"retryInMs,omitempty"`
	Remote    bool  `json:"remote"`
}

// newBridge makes a bridge to one daemon (machines empty: dial), or to
// each of machines.
func newBridge(dial DialFunc, machines []Machine, log *slog.Logger) *bridge {
	b := &bridge{log: log, throttle: 100 * time.Millisecond, byName: map[string]*hostConn{},
		streams: map[*stream]struct{}{}, watches: map[key]*watch{}, pending: map[key]bool{}}
	if len(machines) == 0 {
		machines = []Machine{{Dial: dial}}
	} else {
		b.multi = true
	}
	for _, m := range machines {
		h := &hostConn{name: m.Name, dial: m.Dial, remote: m.Remote, state: hostConnecting, sessions: map[string]protocol.Session{}}
		b.hosts = append(b.hosts, h)
		b.byName[m.Name] = h
	}
	return b
}

// start connects to every host, and keeps connecting until ctx ends. It
// returns once each host's first try is over (a page opened at once sees
// their sessions), or after wait for hosts still trying: the first try's
// errors, joined.
func (b *bridge) start(ctx context.Context, wait time.Duration) error {
	type first struct {
		h   *hostConn
		err error
	}
	ready := make(chan first, len(b.hosts))
	for _, h := range b.hosts {
		r := make(chan error, 1)
		go b.run(ctx, h, r)
		go func() { ready <- first{h, <-r} }()
	}
	if !b.multi {
		return (<-ready).err
	}
	var errs []error
	timeout := time.After(wait)
	for range b.hosts {
		select {
		case f := <-ready:
			if f.err != nil {
				errs = append(errs, fmt.Errorf("host %s: %w", f.h.name, f.err))
			}
		case <-timeout:
			return errors.Join(append(errs, fmt.Errorf("still connecting to some hosts after %v", wait))...)
		}
	}
	return errors.Join(errs...)
}

// run keeps one host's connection up until ctx ends: a daemon that stops
// and starts again, or a host that goes away and comes back, is found
// again, and the pages are told meanwhile.
func (b *bridge) run(ctx context.Context, h *hostConn, ready chan<- error) {
	first := true
	delay := retryMin
	for {
		c, err := h.dial(ctx, func(n client.Notification) { b.note(h, n) })
		if err == nil {
			delay = retryMin
			b.connectedTo(ctx, h, c)
		}
		// Start returns once the sessions are known: a page opened at once sees them.
		if first {
			ready <- err
			first = false
		}
		state := hostDown
		if err == nil {
			select {
			case <-c.Done():
			case <-ctx.Done():
				_ = c.Close()
				return
			}
			if b.multi {
				b.log.Info("web: the connection closed", "host", h.name)
				err = errors.New("the connection to its agentd closed")
				state = hostReconnecting
			} else {
				b.log.Info("web: the daemon closed the connection")
				err = errors.New("the agentd daemon closed the connection")
			}
		} else if errors.Is(err, ErrNoDaemon) {
			state = hostNoDaemon
		}
		if ctx.Err() != nil {
			return
		}
		wait := localRetry
		if h.remote {
			wait, delay = delay, min(delay*2, retryMax)
		}
		b.mu.Lock()
		wasUp := h.client != nil
		changed := h.state != state || h.lastErr != err.Error()
		h.client, h.state, h.lastErr, h.retryAt = nil, state, err.Error(), time.Now().Add(wait)
		b.mu.Unlock()
		if b.multi && changed {
			b.log.Info("web: host not up", "host", h.name, "state", state, "err", err.Error())
		}
		// With --hosts each try is told (the page says when the next is).
		if wasUp || b.multi {
			b.broadcastDaemon()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func (b *bridge) connectedTo(ctx context.Context, h *hostConn, c *client.Client) {
	b.mu.Lock()
	h.client, h.state, h.lastErr = c, hostUp, ""
	var watched []key
	for k := range b.watches {
		if k.host == h.name {
			watched = append(watched, k)
		}
	}
	b.mu.Unlock()
	if b.multi {
		b.log.Info("web: host up", "host", h.name)
	}
	b.relist(ctx, h)
	for _, k := range watched {
		b.subscribe(ctx, k)
	}
	b.broadcastDaemon()
}

// errNoHost: an answer or a screen for a host that is not configured.
var errNoHost = errors.New("no such host")

// errHostDown: the host is configured and not connected now.
type errHostDown struct{ name, state, why string }

func (e errHostDown) Error() string {
	msg := fmt.Sprintf("host %s is %s", e.name, e.state)
	if e.why != "" {
		msg += " (" + e.why + ")"
	}
	return msg + ": nothing was sent; agentd web connects to it again on its own"
}

// call is one request to a host's daemon, or an error saying it is not
// connected. It goes to that host and no other.
func (b *bridge) call(ctx context.Context, host, method string, params, result any) error {
	b.mu.Lock()
	h := b.byName[host]
	var c *client.Client
	var down errHostDown
	if h != nil {
		c = h.client
		down = errHostDown{h.name, h.state, h.lastErr}
	}
	b.mu.Unlock()
	switch {
	case h == nil:
		return fmt.Errorf("%w %q", errNoHost, host)
	case c == nil && b.multi:
		return down
	case c == nil:
		return errNoDaemon
	}
	return c.Call(ctx, method, params, result)
}

var errNoDaemon = errors.New("not connected to the agentd daemon (is it running? agentd web connects again every 2 s)")

// relist replaces a host's sessions with session/list's and sends them to every page.
func (b *bridge) relist(ctx context.Context, h *hostConn) {
	var res protocol.ListResult
	if err := b.call(ctx, h.name, protocol.MethodList, nil, &res); err != nil {
		b.log.Warn("web: session/list", "host", h.name, "err", err)
		return
	}
	b.mu.Lock()
	h.sessions = map[string]protocol.Session{}
	for _, s := range res.Sessions {
		h.sessions[s.SessionID] = s
	}
	b.mu.Unlock()
	b.broadcastDaemon()
}

// list is the sessions, newest first.
func (b *bridge) list() []pageSession {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []pageSession
	for _, h := range b.hosts {
		for _, s := range h.sessions {
			out = append(out, summary(h.name, s))
		}
	}
	if out == nil {
		out = []pageSession{}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Since != out[j].Since {
			return out[i].Since > out[j].Since
		}
		if out[i].Host != out[j].Host {
			return out[i].Host < out[j].Host
		}
		return out[i].SessionID < out[j].SessionID
	})
	return out
}

// hostInfos is each host's state, in config.toml's order.
func (b *bridge) hostInfos() []hostInfo {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	out := make([]hostInfo, 0, len(b.hosts))
	for _, h := range b.hosts {
		hi := hostInfo{Name: h.name, State: h.state, Error: h.lastErr, Remote: h.remote}
		if h.state != hostUp && h.state != hostConnecting {
			hi.RetryInMs = max(0, h.retryAt.Sub(now).Milliseconds())
		}
		out = append(out, hi)
	}
	return out
}

func (b *bridge) snapshotEvent() event {
	var data []byte
	if !b.multi {
		b.mu.Lock()
		h := b.hosts[0]
		connected, lastErr := h.client != nil, h.lastErr
		b.mu.Unlock()
		data, _ = json.Marshal(map[string]any{"sessions": b.list(), "connected": connected, "error": lastErr})
	} else {
		hosts := b.hostInfos()
		up := false
		for _, h := range hosts {
			up = up || h.State == hostUp
		}
		data, _ = json.Marshal(map[string]any{"sessions": b.list(), "connected": up, "error": "", "hosts": hosts})
	}
	return event{name: "sessions", data: data}
}

// broadcastDaemon sends every page the sessions and the connections' state.
func (b *bridge) broadcastDaemon() {
	ev := b.snapshotEvent() // before broadcast takes the lock snapshotEvent needs
	b.broadcast(func(*stream) (event, bool) { return ev, true })
}

// note handles a host's daemon notification on the connection's
// goroutine: quick, and never blocking on a page.
func (b *bridge) note(h *hostConn, n client.Notification) {
	switch n.Method {
	case protocol.NoteState:
		var st protocol.StateNotification
		if json.Unmarshal(n.Params, &st) != nil {
			return
		}
		b.mu.Lock()
		s, known := h.sessions[st.SessionID]
		if known {
			s.State, s.Outcome, s.StateSource, s.Reason, s.Since, s.Prompt, s.Message =
				st.State, st.Outcome, st.StateSource, st.Reason, st.Since, st.Prompt, st.Message
			h.sessions[st.SessionID] = s
		}
		b.mu.Unlock()
		if !known {
			// A session started since the last list: its name and folder come from the list.
			go b.relist(context.Background(), h)
			return
		}
		b.changed(key{h.name, st.SessionID})
	case protocol.NoteExited:
		go b.relist(context.Background(), h)
	case protocol.NoteOutput:
		var o protocol.OutputNotification
		if json.Unmarshal(n.Params, &o) != nil {
			return
		}
		b.mu.Lock()
		w := b.watches[key{h.name, o.SessionID}]
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
// w.id is set. The first event is the snapshot.
func (b *bridge) open(ctx context.Context, wk key) *stream {
	s := &stream{ch: make(chan event, 256), watch: wk, gone: make(chan struct{})}
	s.ch <- b.snapshotEvent()
	b.mu.Lock()
	b.streams[s] = struct{}{}
	var start bool
	if wk.id != "" {
		w := b.watches[wk]
		if w == nil {
			var sess protocol.Session
			if h := b.byName[wk.host]; h != nil {
				sess = h.sessions[wk.id]
			}
			w = &watch{screen: newScreen(sess.Cols, sess.Rows), dirty: make(chan struct{}, 1), stop: make(chan struct{})}
			b.watches[wk] = w
			start = true
			go b.pump(wk, w)
		}
		w.pages++
	}
	b.mu.Unlock()
	if start {
		b.subscribe(ctx, wk)
	} else if wk.id != "" {
		// The screen is already drawn for other pages: this one gets it now.
		b.mu.Lock()
		w := b.watches[wk]
		b.mu.Unlock()
		if w != nil {
			f, _ := w.screen.frame(wk.id)
			f.Host = wk.host
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
	if w := b.watches[s.watch]; s.watch.id != "" && w != nil {
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
		_ = b.call(ctx, s.watch.host, protocol.MethodSubscribe, protocol.SubscribeParams{SessionID: s.watch.id, Output: false}, nil)
	}
}

// subscribe starts a watched session's output: a repaint, then live bytes.
func (b *bridge) subscribe(ctx context.Context, k key) {
	b.mu.Lock()
	w := b.watches[k]
	b.mu.Unlock()
	if w == nil {
		return
	}
	w.screen.reset()
	if err := b.call(ctx, k.host, protocol.MethodSubscribe, protocol.SubscribeParams{SessionID: k.id, Output: true}, nil); err != nil {
		m := map[string]string{"sessionId": k.id, "error": errorMessage(err)}
		if b.multi {
			m["host"] = k.host
		}
		msg, _ := json.Marshal(m)
		b.broadcast(func(s *stream) (event, bool) { return event{name: "screen-error", data: msg}, s.watch == k })
	}
}

// pump sends a watched screen to its pages when it changed, at most once
// per throttle: an agent redrawing its spinner 60 times a second costs
// the phone ten frames.
func (b *bridge) pump(k key, w *watch) {
	var sent uint64
	for {
		select {
		case <-w.stop:
			return
		case <-w.dirty:
		}
		f, rev := w.screen.frame(k.id)
		f.Host = k.host
		if rev != sent {
			sent = rev
			data, _ := json.Marshal(f)
			b.broadcast(func(s *stream) (event, bool) { return event{name: "screen", data: data}, s.watch == k })
		}
		select {
		case <-w.stop:
			return
		case <-time.After(b.throttle):
		}
	}
}

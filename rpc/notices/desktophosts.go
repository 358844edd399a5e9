package notices

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/rpc/client"
	"github.com/agentd/agentd/rpc/config"
	"github.com/agentd/agentd/rpc/hosts"
	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// Desktop notices for other machines' sessions: the daemon keeps one
// connection to the agentd of each [[hosts]] entry (rpc/hosts, over ssh)
// and raises this machine's notices for their sessions as for its own,
// each naming its host, through the same rules: the states of [desktop],
// no notice while a client here is focused, the cooldown. A button
// answers on that host, bound to the prompt the notice showed; that
// host's guard decides, as for any client. docs/hosts.md.

// hostAnswerWait bounds an answer given from a notice on another host.
const hostAnswerWait = time.Minute

// RemoteKey splits a desktop notice's key "host:sN": this machine's
// session ids never hold a ':'.
func RemoteKey(key string) (host, id string, ok bool) {
	return strings.Cut(key, ":")
}

// Hosts are the other machines whose sessions raise this machine's
// desktop notices.
type Hosts struct {
	desktop *Desktop
	view    func() View // what this machine's clients say now
	log     *slog.Logger

	mu    sync.Mutex
	feeds map[string]*hostFeed
}

// FollowHosts follows each remote entry of list, once the desktop's
// notification service is reached, until ctx ends. It returns nil where
// there is nothing to follow: no desktop, [desktop] hosts = false, or no
// remote entry.
func FollowHosts(ctx context.Context, d *Desktop, cfg config.Desktop, list []config.Host, version string, view func() View, log *slog.Logger) *Hosts {
	if d == nil || !cfg.HostsEnabled() {
		return nil
	}
	var remote []config.Host
	for _, h := range list {
		if !h.Local {
			remote = append(remote, h)
		}
	}
	if len(remote) == 0 {
		return nil
	}
	hs := &Hosts{desktop: d, view: view, log: log, feeds: map[string]*hostFeed{}}
	who := protocol.ClientInfo{Name: "agentd-desktop", Version: version}
	go func() {
		select {
		case <-d.Ready():
		case <-ctx.Done():
			return
		}
		for _, h := range remote {
			f := hs.feed(h.Name)
			log.Info("desktop: following a host's sessions", "host", h.Name)
			go hosts.Follow(ctx, h, who, f)
		}
	}()
	return hs
}

// feed is host's feed, made on first use.
func (hs *Hosts) feed(host string) *hostFeed {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	f := hs.feeds[host]
	if f == nil {
		f = &hostFeed{hs: hs, host: host, sessions: map[string]*hostSession{}}
		hs.feeds[host] = f
	}
	return f
}

// lookup is the feed of key's host, where key is another host's.
func (hs *Hosts) lookup(key string) (*hostFeed, string, bool) {
	host, id, remote := RemoteKey(key)
	if !remote {
		return nil, "", false
	}
	if hs == nil {
		return nil, id, true
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.feeds[host], id, true
}

// Answer answers the prompt of another host's session (key "host:sN")
// there; remote is false for a session of this machine.
func (hs *Hosts) Answer(key, promptID, optionID string) (st sessions.State, remote bool, err error) {
	f, id, remote := hs.lookup(key)
	if !remote {
		return st, false, nil
	}
	if f == nil {
		host, _, _ := RemoteKey(key)
		return st, true, fmt.Errorf("host %s is not followed", host)
	}
	st, err = f.answer(id, promptID, optionID)
	return st, true, err
}

// Current is another host's session (key "host:sN") as last told; remote
// is false for a session of this machine.
func (hs *Hosts) Current(key string) (info sessions.Info, ok, remote bool) {
	f, id, remote := hs.lookup(key)
	if !remote || f == nil {
		return info, false, remote
	}
	info, ok = f.current(id)
	return info, ok, true
}

// hostFeed is one host's sessions as this daemon's desktop notices see
// them: a hosts.Follower.
type hostFeed struct {
	hs   *Hosts
	host string

	mu   sync.Mutex
	link caller // nil while the host is unreachable
	// gen counts connections; a session's seen is the gen of the last
	// notification about it, so a listing made as a connection opens
	// does not undo what that connection has said since.
	gen      int
	sessions map[string]*hostSession
	down     string // why the host is unreachable, as last logged
}

type hostSession struct {
	protocol.Session
	seen  int
	named bool // its name is known (a notification carries none)
}

// caller is a connection to the host: a *client.Client, or a test's
// stand-in.
type caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// Connected implements hosts.Follower.
func (f *hostFeed) Connected(c *client.Client, list []protocol.Session) {
	if c == nil {
		f.connected(nil, list)
		return
	}
	f.connected(c, list)
}

func (f *hostFeed) connected(link caller, list []protocol.Session) {
	f.mu.Lock()
	f.link = link
	if f.down != "" {
		f.hs.log.Info("desktop: a host is reachable again", "host", f.host)
		f.down = ""
	}
	listed := map[string]bool{}
	var show []hostSession
	for _, ls := range list {
		listed[ls.SessionID] = true
		old := f.sessions[ls.SessionID]
		if old != nil && old.seen == f.gen && old.named {
			continue // told since the listing was made
		}
		hs := &hostSession{Session: ls, seen: f.gen, named: true}
		if old != nil && old.seen == f.gen {
			hs.Session = withName(old.Session, ls) // its state as told, its name as listed
		}
		f.sessions[ls.SessionID] = hs
		switch {
		case old == nil && hs.State != sessions.Blocked:
			// Done or failed before it was followed: old news. A prompt
			// still waits, so it is news.
		case old != nil && old.named && sameState(old.Session, hs.Session):
			// As it was before the link dropped: its notice is up, or
			// was seen to.
		default:
			show = append(show, *hs)
		}
	}
	var gone []string
	for id, hs := range f.sessions {
		switch {
		case listed[id]:
		case hs.seen < f.gen:
			delete(f.sessions, id)
			gone = append(gone, id)
		case !hs.named:
			// Told of on this connection, yet not in a listing made
			// after: it has ended, and was never shown.
			delete(f.sessions, id)
		}
	}
	f.mu.Unlock()
	for _, hs := range show {
		f.show(hs, "")
	}
	for _, id := range gone {
		f.hs.desktop.Exited(f.key(id))
	}
}

// sameState: nothing a notice shows has changed.
func sameState(a, b protocol.Session) bool {
	return a.State == b.State && a.Outcome == b.Outcome && a.Since == b.Since && promptID(a.Prompt) == promptID(b.Prompt)
}

// withName is the session as told, with the name and folder a listing
// gave.
func withName(s, listed protocol.Session) protocol.Session {
	s.Name, s.Cwd, s.Argv, s.Origin = listed.Name, listed.Cwd, listed.Argv, listed.Origin
	return s
}

// Note implements hosts.Follower.
func (f *hostFeed) Note(n client.Notification) {
	switch n.Method {
	case protocol.NoteState:
		var p protocol.StateNotification
		if json.Unmarshal(n.Params, &p) != nil || p.SessionID == "" || strings.Contains(p.SessionID, ":") {
			return
		}
		f.mu.Lock()
		hs := f.sessions[p.SessionID]
		if hs == nil {
			// A session begun since the listing: its name comes from the
			// next one (or, as a connection opens, its first), and the
			// notice waits for it.
			hs = &hostSession{Session: protocol.Session{SessionID: p.SessionID}}
			f.sessions[p.SessionID] = hs
			if f.link != nil {
				go f.relist()
			}
		}
		hs.seen = f.gen
		hs.Agent, hs.State, hs.Outcome, hs.StateSource, hs.Reason, hs.Since, hs.Prompt, hs.Message =
			p.Agent, p.State, p.Outcome, p.StateSource, p.Reason, p.Since, p.Prompt, p.Message
		now := *hs
		f.mu.Unlock()
		if now.named {
			f.show(now, p.Previous)
		}
	case protocol.NoteExited:
		var p protocol.ExitedNotification
		if json.Unmarshal(n.Params, &p) != nil || p.SessionID == "" {
			return
		}
		f.mu.Lock()
		delete(f.sessions, p.SessionID)
		f.mu.Unlock()
		f.hs.desktop.Exited(f.key(p.SessionID))
	}
}

// relist names the sessions a notification brought, and shows them.
func (f *hostFeed) relist() {
	f.mu.Lock()
	link := f.link
	f.mu.Unlock()
	var list protocol.ListResult
	err := fmt.Errorf("host %s is unreachable", f.host)
	if link != nil {
		ctx, cancel := context.WithTimeout(context.Background(), hostAnswerWait)
		err = link.Call(ctx, protocol.MethodList, nil, &list)
		cancel()
	}
	if err != nil {
		f.hs.log.Info("desktop: listing a host's sessions failed", "host", f.host, "err", err)
	}
	f.mu.Lock()
	var show []hostSession
	for _, ls := range list.Sessions {
		if hs := f.sessions[ls.SessionID]; hs != nil && !hs.named {
			hs.Session = withName(hs.Session, ls)
			hs.named = true
			show = append(show, *hs)
		}
	}
	if err != nil {
		// No name to be had: the notice names the session by its id.
		for _, hs := range f.sessions {
			if !hs.named {
				hs.named = true
				show = append(show, *hs)
			}
		}
	}
	f.mu.Unlock()
	for _, hs := range show {
		f.show(hs, "")
	}
}

// Lost implements hosts.Follower: notices up stay (what they say is still
// so, as far as anyone here knows); a button on one says the host is
// unreachable.
func (f *hostFeed) Lost(err error) {
	f.mu.Lock()
	f.link = nil
	f.gen++
	why := err.Error()
	logIt := f.down != why
	f.down = why
	f.mu.Unlock()
	if logIt {
		f.hs.log.Info("desktop: a host is unreachable", "host", f.host, "err", why)
	}
}

func (f *hostFeed) key(id string) string { return f.host + ":" + id }

// show hands a session's state to the desktop notices.
func (f *hostFeed) show(hs hostSession, previous string) {
	f.hs.desktop.State(f.info(hs.Session), sessions.State{Name: previous}, f.hs.view())
}

// info is a session of the host as a notice words it: the host in its
// name.
func (f *hostFeed) info(ls protocol.Session) sessions.Info {
	name := ls.Name
	if name == "" {
		name = ls.SessionID
	}
	since, _ := time.Parse(time.RFC3339Nano, ls.Since)
	return sessions.Info{ID: f.key(ls.SessionID), Name: name + " on " + f.host, Agent: ls.Agent, Cwd: ls.Cwd,
		State: sessions.State{Agent: ls.Agent, Name: ls.State, Outcome: ls.Outcome, Source: ls.StateSource, Reason: ls.Reason,
			Since: since, Prompt: shownPrompt(ls.Prompt), Message: ls.Message}}
}

// current is a session of the host as last told.
func (f *hostFeed) current(id string) (sessions.Info, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	hs := f.sessions[id]
	if hs == nil {
		return sessions.Info{}, false
	}
	return f.info(hs.Session), true
}

// answer answers a prompt of the host's session id with runtime_answer
// there: its guard decides, bound to the prompt's id.
func (f *hostFeed) answer(id, promptID, optionID string) (sessions.State, error) {
	f.mu.Lock()
	link := f.link
	f.mu.Unlock()
	if link == nil {
		return sessions.State{}, fmt.Errorf("host %s is unreachable", f.host)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hostAnswerWait)
	defer cancel()
	var res protocol.AnswerResult
	err := link.Call(ctx, protocol.MethodAnswer, protocol.AnswerParams{SessionID: id, PromptID: promptID, OptionID: optionID}, &res)
	var je *jsonrpc2.Error
	if errors.As(err, &je) && je.Code == protocol.CodePromptStale {
		return sessions.State{}, &sessions.StaleError{Answered: promptID}
	}
	if err != nil {
		return sessions.State{}, fmt.Errorf("host %s: %w", f.host, err)
	}
	return sessions.State{Name: res.State, Source: res.StateSource, Reason: res.Reason, Prompt: shownPrompt(res.Prompt)}, nil
}

func promptID(p *protocol.Prompt) string {
	if p == nil {
		return ""
	}
	return p.ID
}

// shownPrompt is a prompt another machine's agentd showed, as this one's
// desktop notices take it. It has no keys: answering it
// is that machine's to do.
func shownPrompt(p *protocol.Prompt) *detect.Prompt {
	if p == nil {
		return nil
	}
	out := &detect.Prompt{ID: p.ID, Kind: p.Kind, Question: p.Question, Options: make([]detect.Option, len(p.Options)), Freeform: p.Freeform}
	if s := p.Subject; s != nil {
		out.Subject = &detect.Subject{Kind: s.Kind, Text: s.Text, Detail: s.Detail, Truncated: s.Truncated}
	}
	for i, o := range p.Options {
		out.Options[i] = detect.Option{ID: o.ID, Label: o.Label, Description: o.Description, Kind: o.Kind, Selected: o.Selected}
	}
	return out
}

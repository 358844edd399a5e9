package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/rpc/client"
	"github.com/agentd/agentd/rpc/protocol"
)

// hostsView is /api/sessions with --hosts.
type hostsView struct {
	Sessions []pageSession `json:"sessions"`
	Hosts    []hostInfo    `json:"hosts"`
}

func (v hostsView) session(host, id string) (pageSession, bool) {
	for _, s := range v.Sessions {
		if s.Host == host && s.SessionID == id {
			return s, true
		}
	}
	return pageSession{}, false
}

func (v hostsView) host(name string) hostInfo {
	for _, h := range v.Hosts {
		if h.Name == name {
			return h
		}
	}
	return hostInfo{}
}

func (p *page) awaitHosts(what string, ok func(hostsView) bool) hostsView {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, body := p.do("GET", "/api/sessions", "", nil)
		var v hostsView
		if res.StatusCode == 200 && json.Unmarshal([]byte(body), &v) == nil && ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waited 60 s for %s; /api/sessions: %d %s", what, res.StatusCode, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The page across hosts (agentd web --hosts), with two daemons of the
// test's own standing in for two machines (cmd/agentd's and the browser's
// tests reach real ones over ssh): their sessions have the same id and
// name and the same prompt. Each is listed under its host; requests must
// name their host and go to it alone; a host whose dial fails is shown
// down with its error, one with no daemon as such.
func TestHostsAreKeptApart(t *testing.T) {
	dx, idx := startDaemon(t)
	dy, idy := startDaemon(t)
	if idx != idy {
		t.Fatalf("the two daemons' first sessions are %s and %s; the test wants the same id", idx, idy)
	}
	id := idx
	bx, by := dx.blockDemo(id), dy.blockDemo(id)
	if bx.Prompt.ID == by.Prompt.ID {
		t.Fatalf("the same promptId %s on both daemons", bx.Prompt.ID)
	}
	down := func(context.Context, func(client.Notification)) (*client.Client, error) {
		return nil, errors.New(`ssh: Could not resolve hostname <b>gone</b>: Name or service not known`)
	}
	none := func(context.Context, func(client.Notification)) (*client.Client, error) { return nil, ErrNoDaemon }
	p := newPage(t, pageOpts{machines: []Machine{
		{Name: "x", Dial: dx.dial()}, {Name: "y", Dial: dy.dial(), Remote: true},
		{Name: "gone", Dial: down, Remote: true}, {Name: "empty", Dial: none, Remote: true}}})
	p.login()
	csrf := p.csrf()
	res, hello := p.do("GET", "/api/hello", "", nil)
	if res.StatusCode != 200 || !strings.Contains(hello, `"hosts":["x","y","gone","empty"]`) {
		t.Fatalf("/api/hello: %d %s; want the hosts in order", res.StatusCode, hello)
	}
	v := p.awaitHosts("both blocked, gone down, empty without a daemon", func(v hostsView) bool {
		sx, _ := v.session("x", id)
		sy, _ := v.session("y", id)
		return sx.State == "blocked" && sy.State == "blocked" && v.host("gone").State == "down" && v.host("empty").State == "no daemon"
	})
	if g := v.host("gone"); !strings.Contains(g.Error, "<b>gone</b>") || g.RetryInMs <= 0 || g.RetryInMs > 30_000 {
		t.Fatalf("host gone: %+v; want its error as it was said (the page sets it as text) and when the next try is", g)
	}
	if len(v.Sessions) != 2 || v.host("x").State != "up" || v.host("y").State != "up" {
		t.Fatalf("/api/sessions: %+v", v)
	}

	answer := func(host, promptID string) (*http.Response, string) {
		body := fmt.Sprintf(`{"host":%q,"sessionId":%q,"promptId":%q,"optionId":"1"}`, host, id, promptID)
		if host == "" {
			body = fmt.Sprintf(`{"sessionId":%q,"promptId":%q,"optionId":"1"}`, id, promptID)
		}
		return p.post("/api/answer", body, csrf, nil)
	}
	for _, c := range []struct {
		host   string
		status int
	}{{"", 400}, {"z", 404}, {"gone", 503}, {"empty", 503}} {
		if res, out := answer(c.host, bx.Prompt.ID); res.StatusCode != c.status {
			t.Fatalf("an answer for host %q: %d %s, want %d", c.host, res.StatusCode, out, c.status)
		}
	}
	// x's promptId sent for y's session: y refuses it, nothing typed.
	res, out := answer("y", bx.Prompt.ID)
	var e apiError
	_ = json.Unmarshal([]byte(out), &e)
	if res.StatusCode != http.StatusConflict || (e.Code != protocol.CodePromptStale && e.Code != protocol.CodeAlreadyAnswered) {
		t.Fatalf("x's promptId for y's session: %d %s, want 409 -32021", res.StatusCode, out)
	}
	// x's own: x goes on, y still waits on its own prompt.
	if res, out := answer("x", bx.Prompt.ID); res.StatusCode != 200 {
		t.Fatalf("x's answer: %d %s", res.StatusCode, out)
	}
	dx.waitState(id, "done")
	time.Sleep(300 * time.Millisecond)
	var l protocol.ListResult
	if err := dy.c.Call(t.Context(), "session/list", nil, &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Sessions) != 1 || l.Sessions[0].State != "blocked" || l.Sessions[0].Prompt.ID != by.Prompt.ID {
		t.Fatalf("y after x's answer: %+v; want blocked on %s still", l.Sessions, by.Prompt.ID)
	}
	// seen names its host too.
	if res, out := p.post("/api/seen", fmt.Sprintf(`{"sessionId":%q}`, id), csrf, nil); res.StatusCode != 400 || !strings.Contains(out, "host") {
		t.Fatalf("seen without a host: %d %s", res.StatusCode, out)
	}
	if res, out := p.post("/api/seen", fmt.Sprintf(`{"host":"x","sessionId":%q}`, id), csrf, nil); res.StatusCode != 200 {
		t.Fatalf("seen on x: %d %s", res.StatusCode, out)
	}
	dx.waitState(id, "idle")

	// A screen is watched on its host: y's shows y's prompt.
	if res, _ := p.do("GET", "/api/events?watch="+id, "", nil); res.StatusCode != 400 {
		t.Fatalf("watching %s without its host: %d, want 400", id, res.StatusCode)
	}
	events := p.stream("/api/events?watch=" + id + "&host=y")
	ev := awaitEvent(t, events, "y's screen", func(ev sse) bool {
		return ev.name == "screen" && strings.Contains(ev.data, `"host":"y"`) && strings.Contains(ev.data, "touch NOTES.md")
	})
	_ = ev
	if !strings.Contains(p.logText(), "host=x") {
		t.Errorf("the log names no host:\n%s", p.logText())
	}
}

// Without --hosts the API is as it was: no host anywhere, and a request
// that names one is refused as an unknown field.
func TestOneHostHasNoHostField(t *testing.T) {
	d, id := startDaemon(t)
	p := newPage(t, pageOpts{dial: d.dial()})
	p.login()
	d.waitState(id, "idle")
	for _, path := range []string{"/api/sessions", "/api/hello"} {
		res, body := p.do("GET", path, "", nil)
		if res.StatusCode != 200 || strings.Contains(body, `"host`) {
			t.Fatalf("%s: %d %s; want no host field", path, res.StatusCode, body)
		}
	}
	res, out := p.post("/api/seen", fmt.Sprintf(`{"host":"x","sessionId":%q}`, id), p.csrf(), nil)
	if res.StatusCode != 400 {
		t.Fatalf("seen naming a host without --hosts: %d %s, want 400", res.StatusCode, out)
	}
	res, out = p.post("/api/answer", fmt.Sprintf(`{"host":"x","sessionId":%q,"promptId":"p","optionId":"1"}`, id), p.csrf(), nil)
	if res.StatusCode != 400 || !strings.Contains(out, `unknown field \"host\"`) {
		t.Fatalf("an answer naming a host without --hosts: %d %s, want 400 (unknown field)", res.StatusCode, out)
	}
}

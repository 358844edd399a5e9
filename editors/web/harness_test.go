package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/rpc/client"
	"github.com/agentd/agentd/rpc/protocol"
)

// These tests run the page server's real handler against a real agentd
// daemon (the binary, built once) hosting the real demo agent in a PTY.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// agentdBinary builds cmd/agentd once for the package's tests.
func agentdBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentd-web-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "agentd")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/agentd").CombinedOutput()
		if err != nil {
			buildErr = err
			binPath = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("go build ./cmd/agentd: %v\n%s", buildErr, binPath)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" && buildErr == nil {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// daemon is a daemon of the test's own, in a private folder.
type daemon struct {
	t      testing.TB
	socket string
	env    []string
	c      *client.Client

	mu     sync.Mutex
	states []protocol.StateNotification
	poke   chan struct{}
}

// startDaemon starts a daemon by spawning the demo agent in it with
// `agentd run` (the one command that starts a daemon), and connects a
// client of the test's own to watch states.
func startDaemon(t testing.TB) (*daemon, string) {
	t.Helper()
	root, err := os.MkdirTemp("", "aw-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	d := &daemon{t: t, socket: filepath.Join(root, "run", "agentd.sock"), poke: make(chan struct{}, 1)}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTD_") {
			env = append(env, kv)
		}
	}
	d.env = append(env, "AGENTD_SOCKET="+d.socket, "XDG_STATE_HOME="+filepath.Join(root, "state"))
	bin := agentdBinary(t)
	cmd := exec.Command(bin, "run", "--name", "demo", "--", bin, "demo-agent")
	cmd.Env = d.env
	cmd.Dir = filepath.Join(root, "my-project")
	if err := os.Mkdir(cmd.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agentd run demo-agent: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if d.c != nil {
			d.c.Close()
		}
		stop := exec.Command(bin, "stop", "--force")
		stop.Env = d.env
		if out, err := stop.CombinedOutput(); err != nil {
			t.Errorf("agentd stop --force: %v: %s", err, out)
		}
	})
	id := strings.TrimSpace(string(out))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d.c, err = client.Dial(ctx, d.socket, protocol.HelloParams{Version: "test", Pid: os.Getpid()}, d.note)
	if err != nil {
		t.Fatal(err)
	}
	return d, id
}

func (d *daemon) note(n client.Notification) {
	if n.Method != "session/state" {
		return
	}
	var st protocol.StateNotification
	if json.Unmarshal(n.Params, &st) == nil {
		d.mu.Lock()
		d.states = append(d.states, st)
		d.mu.Unlock()
		select {
		case d.poke <- struct{}{}:
		default:
		}
	}
}

// waitState waits until the session is in state (as session/list says,
// then as notifications say), and returns it.
func (d *daemon) waitState(id, state string) protocol.Session {
	d.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		var l protocol.ListResult
		if err := d.c.Call(context.Background(), "session/list", nil, &l); err != nil {
			d.t.Fatal(err)
		}
		var seen string
		for _, s := range l.Sessions {
			if s.SessionID == id {
				if s.State == state {
					return s
				}
				seen = s.State + " (" + s.Reason + ")"
			}
		}
		select {
		case <-d.poke:
		case <-deadline:
			d.t.Fatalf("session %s: waited 60 s for state %s; it is %s", id, state, seen)
		}
	}
}

// blockDemo gives the demo agent a task and waits for its permission prompt.
func (d *daemon) blockDemo(id string) protocol.Session {
	d.t.Helper()
	d.waitState(id, "idle")
	if err := d.c.Call(context.Background(), "runtime_send", protocol.SendParams{SessionID: id, Text: "make notes", Submit: true}, nil); err != nil {
		d.t.Fatal(err)
	}
	return d.waitState(id, "blocked")
}

func (d *daemon) dial() DialFunc {
	return func(ctx context.Context, onNote func(client.Notification)) (*client.Client, error) {
		c, err := client.Dial(ctx, d.socket, protocol.HelloParams{Version: "test", Pid: os.Getpid()}, onNote)
		if err != nil {
			return nil, err
		}
		var init protocol.InitializeResult
		if err := c.Call(ctx, "initialize", protocol.InitializeParams{ClientInfo: &protocol.ClientInfo{Name: "agentd-web-test"}}, &init); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
}

// page is a page server under test, on a loopback port, and a browser's
// worth of client: a cookie jar.
type page struct {
	t         testing.TB
	srv       *Server
	ts        *httptest.Server
	base      string
	tokenPath string
	client    *http.Client
	log       *strings.Builder
	logMu     *sync.Mutex
}

type pageOpts struct {
	dial       DialFunc
	machines   []Machine // agentd web --hosts
	allowInput bool
	now        func() time.Time
	hosts      []string // more names the server answers to
	keepAlive  time.Duration
}

func newPage(t testing.TB, o pageOpts) *page {
	t.Helper()
	dir := t.TempDir()
	tokenPath := filepath.Join(dir, "cfg", "web-token")
	tokens, err := NewTokens(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if o.dial == nil {
		o.dial = func(context.Context, func(client.Notification)) (*client.Client, error) {
			return nil, errNoDaemon
		}
	}
	var mu sync.Mutex
	log := &strings.Builder{}
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, log}, nil))
	srv := New(Options{Tokens: tokens, Dial: o.dial, Machines: o.machines, Hosts: append([]string{ln.Addr().String(), "localhost:" + portOf(ln)}, o.hosts...),
		AllowInput: o.allowInput, Version: "test", Log: logger, Now: o.now, KeepAlive: o.keepAlive})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_ = srv.Start(ctx)
	ts := &httptest.Server{Listener: ln, Config: &http.Server{Handler: srv}}
	ts.Start()
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &page{t: t, srv: srv, ts: ts, base: ts.URL, tokenPath: tokenPath, client: client, log: log, logMu: &mu}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (p *page) logText() string {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	return p.log.String()
}

func portOf(ln net.Listener) string {
	return ln.Addr().(*net.TCPAddr).AddrPort().String()[len("127.0.0.1:"):]
}

func (p *page) token() string {
	p.t.Helper()
	b, err := os.ReadFile(p.tokenPath)
	if err != nil {
		p.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// do sends a request; mod may change it before it goes.
func (p *page) do(method, path, body string, mod func(*http.Request)) (*http.Response, string) {
	p.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, p.base+path, r)
	if err != nil {
		p.t.Fatal(err)
	}
	if mod != nil {
		mod(req)
	}
	res, err := p.client.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// link is a fresh one-time sign-in link (its path), as agentd web prints one.
func (p *page) link() string {
	p.t.Helper()
	l, err := p.srv.NewLink(p.base, time.Hour)
	if err != nil {
		p.t.Fatal(err)
	}
	return strings.TrimPrefix(l, p.base)
}

// code is a fresh link's query: "code=…".
func (p *page) code() string { return strings.TrimPrefix(p.link(), "/login?") }

// login opens a link as agentd web prints one, and checks the cookie came.
func (p *page) login() {
	p.t.Helper()
	res, body := p.do("GET", p.link(), "", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		p.t.Fatalf("login: %d %q %s, want 303 to /", res.StatusCode, res.Header.Get("Location"), body)
	}
	if len(p.cookies()) != 1 {
		p.t.Fatalf("login: cookies %v, want one", p.cookies())
	}
}

func (p *page) cookies() []*http.Cookie {
	u, _ := url.Parse(p.base)
	return p.client.Jar.Cookies(u)
}

// csrf is the token /api/hello gives a signed-in page.
func (p *page) csrf() string {
	p.t.Helper()
	res, body := p.do("GET", "/api/hello", "", nil)
	if res.StatusCode != 200 {
		p.t.Fatalf("/api/hello: %d %s", res.StatusCode, body)
	}
	var h struct{ CSRF string }
	if err := json.Unmarshal([]byte(body), &h); err != nil || h.CSRF == "" {
		p.t.Fatalf("/api/hello: no csrf in %s", body)
	}
	return h.CSRF
}

// post sends a state-changing request as the page does: same origin,
// CSRF token, JSON.
func (p *page) post(path, body, csrf string, mod func(*http.Request)) (*http.Response, string) {
	p.t.Helper()
	return p.do("POST", path, body, func(r *http.Request) {
		r.Header.Set("Origin", p.base)
		r.Header.Set("X-CSRF-Token", csrf)
		r.Header.Set("Content-Type", "application/json")
		if mod != nil {
			mod(r)
		}
	})
}

// sse is one server-sent event as a page gets it.
type sse struct{ name, data string }

// stream opens an event stream (GET path) with the page's cookie; its
// events arrive on the channel, which is closed when the server ends it.
func (p *page) stream(path string) <-chan sse {
	p.t.Helper()
	req, _ := http.NewRequestWithContext(p.t.Context(), "GET", p.base+path, nil)
	// No client timeout: a stream is open for as long as the test wants;
	// the awaiting helpers hold the guards.
	streamer := &http.Client{Jar: p.client.Jar}
	res, err := streamer.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	if res.StatusCode != 200 {
		p.t.Fatalf("GET %s: %d, want a stream", path, res.StatusCode)
	}
	events := make(chan sse, 256)
	go func() {
		defer res.Body.Close()
		defer close(events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				events <- sse{name, v}
			}
		}
	}()
	return events
}

// awaitEvent reads events until ok says yes; it fails naming what was
// awaited if the stream ends first or nothing matches for 60 s.
func awaitEvent(t testing.TB, events <-chan sse, what string, ok func(sse) bool) sse {
	t.Helper()
	var seen []string
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ev, open := <-events:
			if !open {
				t.Fatalf("the event stream ended while waiting for %s; saw %q", what, seen)
			}
			if ok(ev) {
				return ev
			}
			seen = append(seen, ev.name+" "+ev.data[:min(len(ev.data), 80)])
		case <-deadline:
			t.Fatalf("waited 60 s for %s on the event stream; saw %q", what, seen)
		}
	}
}

// awaitEnd reads events until the server ends the stream, and returns them.
func awaitEnd(t testing.TB, events <-chan sse, what string) []sse {
	t.Helper()
	var seen []sse
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ev, open := <-events:
			if !open {
				return seen
			}
			seen = append(seen, ev)
		case <-deadline:
			t.Fatalf("waited 60 s for the server to end the event stream (%s); it sent %d events since", what, len(seen))
		}
	}
}

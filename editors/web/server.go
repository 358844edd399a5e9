// Package web is agentd's third client beside VS Code and Neovim: a page
// for a phone or a browser that lists the sessions, shows a blocked
// session's question with its options as buttons, draws the agent's
// screen, and answers through runtime_answer. Its server is a client of
// the daemon's socket like the CLI, so the daemon pays nothing while no
// page server runs. The page's files are embedded (static/), served as
// files so the Content-Security-Policy needs no inline script.
package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	qrcode "github.com/skip2/go-qrcode"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/rpc/protocol"
)

//go:embed static
var staticFiles embed.FS

// CookieName is the signed-in browser's cookie.
const CookieName = "agentd_web"

// MaxBody bounds a request body: an answer is a few hundred bytes.
const MaxBody = 16 << 10

// Options configure a page server.
type Options struct {
	Tokens *Tokens
	Dial   DialFunc
	// Machines, when set, are the hosts the page shows (agentd web
	// --hosts), each with its own connection, in place of Dial: sessions,
	// answers and screens carry their host's name.
	Machines []Machine
	// FirstWait bounds how long Start waits for the Machines' first tries
	// (default 5 s): a host that does not answer holds up no link.
	FirstWait time.Duration
	// Hosts are the Host header values the page answers to ("name" or
	// "name:port"); anything else is refused (DNS rebinding).
	Hosts []string
	// TLS: cookies are Secure and origins are https.
	TLS bool
	// AllowInput lets the page type into an agent (runtime_send), not
	// only answer its prompts.
	AllowInput bool
	Version    string
	Log        *slog.Logger
	// LoginFailures within LoginWindow from one source (remote address)
	// lock that source out for LoginLockout, twice as long at each lockout
	// after, up to LoginLockoutMax (defaults 5, 10 minutes, 1 minute, 1
	// hour). LoginSources bounds the table of sources (default 1024).
	LoginFailures   int
	LoginWindow     time.Duration
	LoginLockout    time.Duration
	LoginLockoutMax time.Duration
	LoginSources    int
	// KeepAlive is how often an open event stream gets a "ping" event
	// (default 10 s); the page shows itself stale after three missed.
	KeepAlive time.Duration
	// TokenCheck is how often the token file is read for a rotation
	// (default 2 s): open streams end when it changes.
	TokenCheck time.Duration
	Now        func() time.Time
}

// Server serves the page and its API.
type Server struct {
	o      Options
	b      *bridge
	logins *limiter
	codes  *codes
	hosts  map[string]bool
	mux    *http.ServeMux
}

// New makes a page server; Start connects it to the daemon.
func New(o Options) *Server {
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LoginFailures == 0 {
		o.LoginFailures = 5
	}
	if o.LoginWindow == 0 {
		o.LoginWindow = 10 * time.Minute
	}
	if o.LoginLockout == 0 {
		o.LoginLockout = time.Minute
	}
	if o.LoginLockoutMax == 0 {
		o.LoginLockoutMax = time.Hour
	}
	if o.LoginSources == 0 {
		o.LoginSources = 1024
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = 10 * time.Second
	}
	if o.TokenCheck == 0 {
		o.TokenCheck = 2 * time.Second
	}
	if o.FirstWait == 0 {
		o.FirstWait = 5 * time.Second
	}
	s := &Server{o: o, b: newBridge(o.Dial, o.Machines, o.Log), logins: newLimiter(o.LoginFailures, o.LoginWindow, o.LoginLockout, o.LoginLockoutMax, o.LoginSources), codes: newCodes(64), hosts: map[string]bool{}}
	for _, h := range o.Hosts {
		s.hosts[strings.ToLower(h)] = true
	}
	s.routes()
	return s
}

// Start connects to the daemon and keeps connecting until ctx ends. It
// returns the first attempt's error (the server still runs: it tries
// again every 2 s, and the page says it is not connected). With Machines
// it connects to each, and returns their first tries' errors (or says
// which are still trying after FirstWait); each host is tried again on
// its own, and the page shows each one's state.
func (s *Server) Start(ctx context.Context) error {
	go s.o.Tokens.Watch(ctx, s.o.TokenCheck)
	return s.b.start(ctx, s.o.FirstWait)
}

func (s *Server) routes() {
	m := http.NewServeMux()
	assets, _ := fs.Sub(staticFiles, "static")
	files := http.FileServerFS(assets)
	m.Handle("GET /app.js", files)
	m.Handle("GET /app.css", files)
	m.Handle("GET /icon.svg", files)
	m.HandleFunc("GET /login", s.login)
	m.HandleFunc("GET /{$}", s.index)
	m.HandleFunc("GET /api/hello", s.signedIn(s.hello))
	m.HandleFunc("GET /api/sessions", s.signedIn(s.sessions))
	m.HandleFunc("GET /api/events", s.signedIn(s.events))
	m.HandleFunc("POST /api/answer", s.changes(s.answer))
	m.HandleFunc("POST /api/seen", s.changes(s.seen))
	m.HandleFunc("POST /api/send", s.changes(s.send))
	m.HandleFunc("POST /api/link", s.changes(s.link))
	s.mux = m
}

// ServeHTTP checks the Host first, sets the headers every answer carries
// and never any CORS header: the page talks only to its own origin.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if s.o.TLS {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	if !s.hostAllowed(r.Host) {
		s.o.Log.Warn("web: refused a request for another Host", "host", r.Host, "remote", r.RemoteAddr, "ua", r.UserAgent())
		httpError(w, http.StatusMisdirectedRequest, fmt.Sprintf("this server does not answer to Host %q (start agentd web with --host for another name)", r.Host))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// originAllowed: a state-changing request must come from a page of one
// of the names this server answers to. Not only r.Host: behind a proxy
// such as `tailscale serve` the page's origin is https://NAME.ts.net
// while the request may reach this server under another Host.
func (s *Server) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" || u.User != nil {
		return false
	}
	switch u.Scheme {
	case "https":
	case "http":
		if s.o.TLS {
			return false
		}
	default:
		return false
	}
	return s.hostAllowed(u.Host)
}

func (s *Server) hostAllowed(host string) bool {
	host = strings.ToLower(host)
	if s.hosts[host] {
		return true
	}
	// A name given without a port matches it on any port.
	if name, _, err := net.SplitHostPort(host); err == nil && s.hosts[name] {
		return true
	}
	return false
}

// NewLink is a one-time sign-in link on base (scheme://host[:port]),
// good for life: what agentd web prints, each start afresh.
func (s *Server) NewLink(base string, life time.Duration) (string, error) {
	tok, err := s.o.Tokens.current()
	if err != nil {
		return "", err
	}
	c, err := s.codes.make(tok, s.o.Now(), life)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(base, "/") + "/login?code=" + c, nil
}

// login exchanges the one-time code in the link for a cookie, and sends
// the browser on to /; the code is spent, so the link left in the
// browser's history (and synced to other devices) signs nobody in. What
// it answers is a page for a person (a phone), never raw JSON.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	now := s.o.Now()
	// A sign-in link is opened in the address bar: an <img>, a script or a
	// frame of some other page pointing here is refused before it can
	// count against anyone (browsers say what loads a URL in Sec-Fetch-Dest).
	if dest := r.Header.Get("Sec-Fetch-Dest"); dest != "" && dest != "document" {
		s.o.Log.Warn("web: refused a sign-in that is not a page load", append([]any{"dest", dest}, who(r)...)...)
		messagePage(w, http.StatusForbidden, "Open the link in the address bar",
			"A sign-in link works only when a browser opens it as a page, not as an image, a script or a frame of another page.")
		return
	}
	// A browser fetching ahead (the address bar's prerender, a speculation
	// rule) would spend the code before the person opens the link.
	if r.Header.Get("Sec-Purpose") != "" || r.Header.Get("Purpose") == "prefetch" {
		w.Header().Set("Cache-Control", "no-store")
		messagePage(w, http.StatusServiceUnavailable, "Not fetched ahead", "A sign-in link is spent only when it is opened.")
		return
	}
	q := r.URL.Query()
	if q.Has("token") {
		// Never checked: the long-lived token is not to travel in a URL.
		s.o.Log.Warn("web: refused a link with ?token= (links carry one-time codes)", who(r)...)
		messagePage(w, http.StatusBadRequest, "This is an old kind of link",
			"Links no longer carry the access token; each carries a one-time code instead.",
			"Open the link agentd web printed when it started, or make one on a signed-in page (“Link a device”).")
		return
	}
	// Signed in already (a reload, the link opened again): the page, and
	// the code is left for whoever it was meant for.
	if s.cookie(r) != "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	key := sourceKey(r.RemoteAddr)
	if until, locked := s.logins.locked(key, now); locked {
		s.o.Log.Warn("web: login refused: too many failures from this source", append([]any{"source", key, "until", until.UTC().Format(time.RFC3339)}, who(r)...)...)
		s.lockedOut(w, key, until, now)
		return
	}
	tok, err := s.o.Tokens.current()
	if err != nil {
		messagePage(w, http.StatusInternalServerError, "agentd web cannot sign you in", err.Error())
		return
	}
	if why := s.codes.redeem(q.Get("code"), tok, now); why != 0 {
		if why == codeUnknown {
			if until := s.logins.fail(key, now); !until.IsZero() {
				s.o.Log.Warn("web: login with an unknown code; source locked out", append([]any{"source", key}, who(r)...)...)
				s.lockedOut(w, key, until, now)
				return
			}
		}
		s.o.Log.Warn("web: login refused", append([]any{"source", key, "why", codeWhy[why]}, who(r)...)...)
		messagePage(w, http.StatusUnauthorized, "This link does not sign in", codeWhy[why], getALink)
		return
	}
	v, err := s.o.Tokens.newCookie(now)
	if err != nil {
		messagePage(w, http.StatusInternalServerError, "agentd web cannot sign you in", err.Error())
		return
	}
	s.logins.succeeded(key)
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: v, Path: "/", HttpOnly: true, Secure: s.o.TLS,
		SameSite: http.SameSiteStrictMode, MaxAge: int(cookieLife.Seconds())})
	s.o.Log.Info("web: signed in", who(r)...)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

var codeWhy = map[int]string{
	codeUnknown: "Its code is not one this agentd web made: mistyped, or made before agentd web last started (a restart voids the links printed before).",
	codeUsed:    "It was used already: each link signs in one browser, once.",
	codeExpired: fmt.Sprintf("It expired: a printed link lasts %v, one made on a page %v.", PrintedLinkLife, PageLinkLife),
	codeRotated: "The access token was rotated since it was made (agentd web --rotate).",
}

const getALink = "For a fresh link: restart agentd web (it prints one each start), or on a browser that is signed in, tap “Link a device”."

// link makes a one-time link for another device, on the page's own
// origin (checked by changes), with its QR code for the page to draw.
func (s *Server) link(w http.ResponseWriter, r *http.Request, _ []byte) {
	l, err := s.NewLink(r.Header.Get("Origin"), PageLinkLife)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	q, err := qrcode.New(l, qrcode.Medium)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	var rows []string
	for _, row := range q.Bitmap() {
		b := make([]byte, len(row))
		for i, dark := range row {
			b[i] = '0'
			if dark {
				b[i] = '1'
			}
		}
		rows = append(rows, string(b))
	}
	s.o.Log.Info("web: made a link for another device", who(r)...)
	writeJSON(w, http.StatusOK, map[string]any{"link": l, "expiresInSeconds": int(PageLinkLife.Seconds()), "qr": rows})
}

// lockedOut tells a locked-out browser what happened and when to try again.
func (s *Server) lockedOut(w http.ResponseWriter, key string, until, now time.Time) {
	wait := until.Sub(now)
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	when := fmt.Sprintf("%d seconds", secs)
	if secs > 90 {
		when = fmt.Sprintf("%d minutes", (secs+59)/60)
	}
	messagePage(w, http.StatusTooManyRequests, "Too many wrong sign-in links",
		fmt.Sprintf("Sign-ins from this address (%s) failed too often, so agentd web refuses them for now, the right link too.", key),
		fmt.Sprintf("Try again in %s (after %s UTC) with a fresh link.", when, until.UTC().Format("15:04:05")),
		"Each lockout of the same address lasts twice as long as the one before. Other addresses can still sign in.")
}

// messageTemplate is the page /login answers with when it does not sign in.
var messageTemplate = template.Must(template.New("message").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>agentd — {{.Title}}</title>
<link rel="icon" href="/icon.svg">
<link rel="stylesheet" href="/app.css">
</head>
<body>
<header><h1>agentd</h1></header>
<main><section class="signin message">
<h2>{{.Title}}</h2>
{{range .Lines}}<p>{{.}}</p>
{{end}}</section></main>
</body>
</html>
`))

// messagePage answers with a page saying title and lines, escaped.
func messagePage(w http.ResponseWriter, status int, title string, lines ...string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = messageTemplate.Execute(w, struct {
		Title string
		Lines []string
	}{title, lines})
}

// cookie is the request's valid cookie, or "".
func (s *Server) cookie(r *http.Request) string {
	c, err := r.Cookie(CookieName)
	if err != nil || !s.o.Tokens.checkCookie(c.Value, s.o.Now()) {
		return ""
	}
	return c.Value
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	name := "static/index.html"
	if s.cookie(r) == "" {
		w.WriteHeader(http.StatusUnauthorized)
		name = "static/signin.html"
	}
	b, _ := staticFiles.ReadFile(name)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b)
}

// signedIn lets through requests with a valid cookie.
func (s *Server) signedIn(h func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := s.cookie(r)
		if c == "" {
			httpError(w, http.StatusUnauthorized, "not signed in: open the link agentd web printed")
			return
		}
		h(w, r, c)
	}
}

// changes guards a state-changing request: signed in, from this origin,
// with the CSRF token, JSON, and small.
func (s *Server) changes(h func(http.ResponseWriter, *http.Request, []byte)) http.HandlerFunc {
	return s.signedIn(func(w http.ResponseWriter, r *http.Request, cookie string) {
		if origin := r.Header.Get("Origin"); !s.originAllowed(origin) {
			s.o.Log.Warn("web: refused a request from another origin", "origin", origin, "remote", r.RemoteAddr, "ua", r.UserAgent())
			httpError(w, http.StatusForbidden, fmt.Sprintf("refused: the request came from origin %q, not from this page", origin))
			return
		}
		if !s.o.Tokens.checkCSRF(cookie, r.Header.Get("X-CSRF-Token")) {
			s.o.Log.Warn("web: refused a request without its CSRF token", "remote", r.RemoteAddr, "ua", r.UserAgent())
			httpError(w, http.StatusForbidden, "refused: missing or wrong CSRF token (reload the page)")
			return
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			httpError(w, http.StatusUnsupportedMediaType, "send JSON (Content-Type: application/json)")
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", MaxBody))
				return
			}
			httpError(w, http.StatusBadRequest, "reading the request: "+err.Error())
			return
		}
		h(w, r, body)
	})
}

func (s *Server) hello(w http.ResponseWriter, r *http.Request, cookie string) {
	csrf, err := s.o.Tokens.csrf(cookie)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	hello := map[string]any{"csrf": csrf, "allowInput": s.o.AllowInput, "version": s.o.Version,
		"keepAliveMs": s.o.KeepAlive.Milliseconds()}
	if s.b.multi {
		var names []string
		for _, h := range s.b.hosts {
			names = append(names, h.name)
		}
		hello["hosts"] = names
	}
	writeJSON(w, http.StatusOK, hello)
}

func (s *Server) sessions(w http.ResponseWriter, r *http.Request, _ string) {
	out := map[string]any{"sessions": s.b.list()}
	if s.b.multi {
		out["hosts"] = s.b.hostInfos()
	}
	writeJSON(w, http.StatusOK, out)
}

// events is the page's live feed (server-sent events): the sessions, each
// change of state, the watched session's screen, and a "ping" every
// KeepAlive so the page can tell a quiet feed from a dead one. The cookie
// is checked again before every event (cheaply: the token's generation
// and the cookie's age) and when the token changes, so a rotation or the
// cookie's expiry ends a stream that was open before it.
func (s *Server) events(w http.ResponseWriter, r *http.Request, cookie string) {
	fl, ok := w.(http.Flusher)
	if !ok {
		httpError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	watch := key{id: r.URL.Query().Get("watch")}
	if len(watch.id) > 200 {
		httpError(w, http.StatusBadRequest, "watch: session id too long")
		return
	}
	if s.b.multi && watch.id != "" {
		// The session's host: the same id may name a session on another.
		watch.host = r.URL.Query().Get("host")
		if s.b.byName[watch.host] == nil {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("watch: no host %q (give host=NAME with watch=SESSION)", watch.host))
			return
		}
	}
	rotated, gen := s.o.Tokens.changes()
	issued, _ := cookieIssued(cookie)
	expires := issued.Add(cookieLife)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	st := s.b.open(r.Context(), watch)
	defer s.b.close(st)
	keepAlive := time.NewTicker(s.o.KeepAlive)
	defer keepAlive.Stop()
	expiry := time.NewTimer(expires.Sub(s.o.Now()))
	defer expiry.Stop()
	// signedOut tells the page why its feed ends, so it stops reconnecting
	// and says what to do, instead of retrying into 401s.
	signedOut := func(why string) {
		s.o.Log.Info("web: closed an event stream", append([]any{"why", why}, who(r)...)...)
		data, _ := json.Marshal(map[string]string{"error": why})
		_, _ = fmt.Fprintf(w, "event: signed-out\ndata: %s\n\n", data)
		fl.Flush()
	}
	stillValid := func() bool {
		if s.o.Tokens.generation() != gen {
			signedOut("this browser is signed out: the access token changed (agentd web --rotate); open a new link from agentd web")
			return false
		}
		if !s.o.Now().Before(expires) {
			signedOut(expiredMsg)
			return false
		}
		return true
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-st.gone:
			return
		case <-rotated:
			if !s.o.Tokens.checkCookie(cookie, s.o.Now()) {
				signedOut("this browser is signed out: the access token changed (agentd web --rotate) or its file is unusable; open a new link from agentd web")
				return
			}
			// The file changed but not the token (touched): keep going.
			rotated, gen = s.o.Tokens.changes()
			continue
		case <-expiry.C:
			signedOut(expiredMsg)
			return
		case <-keepAlive.C:
			if !stillValid() {
				return
			}
			if _, err := io.WriteString(w, "event: ping\ndata: {}\n\n"); err != nil {
				return
			}
		case ev := <-st.ch:
			if !stillValid() {
				return
			}
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data); err != nil {
				return
			}
		}
		fl.Flush()
	}
}

const expiredMsg = "this browser's sign-in expired (30 days); open a new link from agentd web"

// who is where a request came from, for the log.
func who(r *http.Request) []any {
	return []any{"remote", r.RemoteAddr, "ua", r.UserAgent()}
}

// hostOf decodes a request's body, with its host when the page shows
// several (--hosts), where "host" is required; without --hosts a "host"
// field is unknown, as it always was. p is the protocol's params.
func (s *Server) hostOf(body []byte, p any) (string, error) {
	if !s.b.multi {
		return "", strictJSON(body, p)
	}
	var h struct {
		Host string `json:"host"`
	}
	// The same body twice: once for the host alone (other fields
	// allowed), once strictly for the rest with "host" taken out.
	if err := json.Unmarshal(body, &h); err != nil {
		return "", fmt.Errorf("bad JSON: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return "", fmt.Errorf("bad JSON: %v", err)
	}
	delete(m, "host")
	rest, _ := json.Marshal(m)
	if err := strictJSON(rest, p); err != nil {
		return "", err
	}
	if h.Host == "" {
		return "", errors.New("this page shows several hosts: say which (host)")
	}
	return h.Host, nil
}

// hostArgs is the host for the log, with --hosts.
func (s *Server) hostArgs(host string) []any {
	if !s.b.multi {
		return nil
	}
	return []any{"host", host}
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, body []byte) {
	var p protocol.AnswerParams
	host, err := s.hostOf(body, &p)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	if p.SessionID == "" || p.PromptID == "" || (p.OptionID == "" && p.Text == "") {
		httpError(w, http.StatusBadRequest, "an answer needs sessionId, promptId and optionId or text")
		return
	}
	// The log holds what was chosen and from where, never the text typed.
	s.o.Log.Info("web: answer", append(append(s.hostArgs(host), "session", p.SessionID, "prompt", p.PromptID, "option", p.OptionID, "textBytes", len(p.Text)), who(r)...)...)
	// To the host it was shown for and no other: the promptId, which
	// names that one appearance of that prompt (its question, options and
	// subject, salted by its session), is checked there afresh.
	var res protocol.AnswerResult
	if err := s.b.call(r.Context(), host, protocol.MethodAnswer, p, &res); err != nil {
		s.o.Log.Info("web: answer refused", append(append(s.hostArgs(host), "session", p.SessionID, "err", errorMessage(err)), who(r)...)...)
		rpcError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) seen(w http.ResponseWriter, r *http.Request, body []byte) {
	var p protocol.SessionRef
	host, err := s.hostOf(body, &p)
	if err != nil || p.SessionID == "" {
		msg := "seen needs sessionId"
		if s.b.multi {
			msg = "seen needs host and sessionId"
		}
		httpError(w, http.StatusBadRequest, msg)
		return
	}
	s.o.Log.Info("web: seen", append(append(s.hostArgs(host), "session", p.SessionID), who(r)...)...)
	if err := s.b.call(r.Context(), host, protocol.MethodSeen, p, nil); err != nil {
		rpcError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, nil)
}

// send types text into an agent (runtime_send, refused while it waits on
// a prompt): only with --allow-input.
func (s *Server) send(w http.ResponseWriter, r *http.Request, body []byte) {
	if !s.o.AllowInput {
		s.o.Log.Warn("web: input refused (no --allow-input)", who(r)...)
		httpError(w, http.StatusForbidden, "typing into agents is off: start agentd web with --allow-input")
		return
	}
	var p protocol.SendParams
	host, err := s.hostOf(body, &p)
	if err != nil || p.SessionID == "" || p.Text == "" {
		msg := "send needs sessionId and text"
		if s.b.multi {
			msg = "send needs host, sessionId and text"
		}
		httpError(w, http.StatusBadRequest, msg)
		return
	}
	s.o.Log.Info("web: input", append(append(s.hostArgs(host), "session", p.SessionID, "textBytes", len(p.Text), "submit", p.Submit), who(r)...)...)
	if err := s.b.call(r.Context(), host, protocol.MethodSend, p, nil); err != nil {
		rpcError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, nil)
}

// strictJSON decodes one JSON object with no unknown fields.
func strictJSON(body []byte, v any) error {
	d := json.NewDecoder(strings.NewReader(string(body)))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("bad JSON: %v", err)
	}
	return nil
}

// apiError is what the page is told when something is refused: the
// daemon's code and words where it gave them (a stale prompt is -32021,
// as runtime_answer says it), and the prompt on screen now.
type apiError struct {
	Error  string          `json:"error"`
	Code   int64           `json:"code,omitempty"`
	Prompt json.RawMessage `json:"prompt,omitempty"`
}

func httpError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg})
}

func rpcError(w http.ResponseWriter, err error) {
	var e *jsonrpc2.Error
	var down errHostDown
	switch {
	case errors.Is(err, errNoHost):
		httpError(w, http.StatusNotFound, err.Error())
		return
	case errors.As(err, &down):
		httpError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	if !errors.As(err, &e) {
		status := http.StatusBadGateway
		if errors.Is(err, context.Canceled) {
			status = http.StatusServiceUnavailable
		}
		httpError(w, status, errorMessage(err))
		return
	}
	out := apiError{Error: e.Message, Code: e.Code}
	if e.Data != nil {
		var d struct {
			Prompt json.RawMessage `json:"prompt"`
		}
		if json.Unmarshal(*e.Data, &d) == nil {
			out.Prompt = d.Prompt
		}
	}
	status := http.StatusConflict
	switch e.Code {
	case protocol.CodeSessionNotFound:
		status = http.StatusNotFound
	case protocol.CodeInvalidParams, protocol.CodeOptionUnknown, protocol.CodeNotAnswerable:
		status = http.StatusBadRequest
	}
	writeJSON(w, status, out)
}

func errorMessage(err error) string {
	var e *jsonrpc2.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

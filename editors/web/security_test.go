package web

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/rpc/protocol"
)

// Each test here removes one guard's way round: it fails if that guard is
// taken out of the server.

func TestNoCookieIsRefused(t *testing.T) {
	p := newPage(t, pageOpts{})
	for _, path := range []string{"/api/sessions", "/api/hello", "/api/events"} {
		res, body := p.do("GET", path, "", nil)
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not signed in") {
			t.Errorf("GET %s without a cookie: %d %s, want 401 not signed in", path, res.StatusCode, body)
		}
	}
	res, body := p.do("GET", "/", "", nil)
	if res.StatusCode != http.StatusUnauthorized || strings.Contains(body, "app.js") {
		t.Errorf("GET / without a cookie: %d, page has the app: %v; want 401 and the sign-in page", res.StatusCode, strings.Contains(body, "app.js"))
	}
	res, body = p.post("/api/answer", `{"sessionId":"s1","promptId":"x","optionId":"1"}`, "anything", nil)
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /api/answer without a cookie: %d %s, want 401", res.StatusCode, body)
	}
}

func TestWrongTokenAndForgedCookie(t *testing.T) {
	p := newPage(t, pageOpts{})
	res, body := p.do("GET", "/login?code="+strings.Repeat("A", 22), "", nil)
	if res.StatusCode != http.StatusUnauthorized || len(res.Cookies()) != 0 {
		t.Fatalf("login with a wrong code: %d cookies %v %s, want 401 and no cookie", res.StatusCode, res.Cookies(), body)
	}
	res, _ = p.do("GET", "/login", "", nil)
	if res.StatusCode != http.StatusUnauthorized || len(res.Cookies()) != 0 {
		t.Fatalf("login with no code: %d, want 401 and no cookie", res.StatusCode)
	}
	// A cookie of the right shape not made from the token.
	issued := fmt.Sprint(time.Now().Unix())
	res, body = p.do("GET", "/api/sessions", "", func(r *http.Request) {
		r.AddCookie(&http.Cookie{Name: CookieName, Value: issued + "." + mac([]byte("not-the-token"), "cookie", issued)})
	})
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a forged cookie: %d %s, want 401", res.StatusCode, body)
	}
	// A link signs in, with the cookie's flags.
	res, _ = p.do("GET", p.link(), "", nil)
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("login with a link: %d cookies %v, want 303 and one cookie", res.StatusCode, res.Cookies())
	}
	c := res.Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure {
		t.Errorf("cookie flags: HttpOnly %v SameSite %v Secure %v; want HttpOnly, Strict, not Secure without TLS", c.HttpOnly, c.SameSite, c.Secure)
	}
	if strings.Contains(c.Value, p.token()) {
		t.Error("the cookie carries the token itself")
	}
	res, body = p.do("GET", "/api/sessions", "", nil)
	if res.StatusCode != 200 {
		t.Fatalf("signed in: /api/sessions %d %s", res.StatusCode, body)
	}
}

func TestForgedHostIsRefused(t *testing.T) {
	p := newPage(t, pageOpts{})
	p.login()
	// Go's client picks cookies by the Host header: the signed-in cookie is
	// added by hand, so only the Host stands between the request and an answer.
	cookie := p.cookies()[0]
	as := func(host string) func(*http.Request) {
		return func(r *http.Request) { r.Host = host; r.AddCookie(cookie) }
	}
	for _, path := range []string{"/", "/api/sessions", p.link(), "/app.js"} {
		res, body := p.do("GET", path, "", as("attacker.example:80"))
		if res.StatusCode != http.StatusMisdirectedRequest || !strings.Contains(body, "attacker.example") {
			t.Errorf("GET %s with Host attacker.example: %d %s, want 421 naming the host", path, res.StatusCode, body)
		}
	}
	// The names it was given pass: localhost on its port.
	res, body := p.do("GET", "/api/sessions", "", as("localhost:"+portOf(p.ts.Listener)))
	if res.StatusCode != 200 {
		t.Errorf("Host localhost:port: %d %s, want 200", res.StatusCode, body)
	}
}

func TestCrossOriginPostIsRefused(t *testing.T) {
	p := newPage(t, pageOpts{})
	p.login()
	csrf := p.csrf()
	for _, origin := range []string{"http://attacker.example", "null", ""} {
		res, body := p.post("/api/seen", `{"sessionId":"s1"}`, csrf, func(r *http.Request) {
			if origin == "" {
				r.Header.Del("Origin")
			} else {
				r.Header.Set("Origin", origin)
			}
		})
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "origin") {
			t.Errorf("POST with Origin %q: %d %s, want 403 naming the origin", origin, res.StatusCode, body)
		}
		for k := range res.Header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Errorf("a CORS header in the answer: %s", k)
			}
		}
	}
	if !strings.Contains(p.logText(), "refused a request from another origin") {
		t.Error("the refusal is not logged")
	}
}

// Behind `tailscale serve` the page's origin is the tailnet name over
// https, whatever Host reaches the server: a name given with --host is a
// page of this server; a look-alike is not.
func TestOriginOfANameGivenWithHost(t *testing.T) {
	p := newPage(t, pageOpts{hosts: []string{"box.tailnet.ts.net"}})
	p.login()
	csrf := p.csrf()
	for origin, ok := range map[string]bool{
		"https://box.tailnet.ts.net":          true,
		"https://box.tailnet.ts.net.evil.com": false,
		"https://evil.com":                    false,
		"https://box.tailnet.ts.net/path":     false,
	} {
		res, body := p.post("/api/seen", `{"sessionId":"s1"}`, csrf, func(r *http.Request) { r.Header.Set("Origin", origin) })
		if got := res.StatusCode != http.StatusForbidden; got != ok {
			t.Errorf("Origin %q: %d %s; want allowed %v", origin, res.StatusCode, body, ok)
		}
	}
}

func TestMissingCSRFTokenIsRefused(t *testing.T) {
	p := newPage(t, pageOpts{})
	p.login()
	other := newPage(t, pageOpts{})
	other.login()
	for name, tok := range map[string]string{"none": "", "wrong": strings.Repeat("x", 43), "another page's": other.csrf()} {
		res, body := p.post("/api/seen", `{"sessionId":"s1"}`, tok, nil)
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "CSRF") {
			t.Errorf("POST with %s CSRF token: %d %s, want 403", name, res.StatusCode, body)
		}
	}
	// With its own token it gets past the guards (to a daemon that is not there).
	res, body := p.post("/api/seen", `{"sessionId":"s1"}`, p.csrf(), nil)
	if res.StatusCode == http.StatusForbidden {
		t.Errorf("POST with the page's own CSRF token: %d %s", res.StatusCode, body)
	}
}

func TestOversizedBodyIsRefused(t *testing.T) {
	p := newPage(t, pageOpts{})
	p.login()
	big := `{"sessionId":"s1","promptId":"p","text":"` + strings.Repeat("a", MaxBody) + `"}`
	res, body := p.post("/api/answer", big, p.csrf(), nil)
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a %d-byte answer: %d %s, want 413", len(big), res.StatusCode, body)
	}
	res, body = p.post("/api/answer", `{"sessionId":"s1","promptId":"p","optionId":"1","extra":1}`, p.csrf(), nil)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "extra") {
		t.Fatalf("an answer with an unknown field: %d %s, want 400 naming it", res.StatusCode, body)
	}
}

func TestBadLoginsAreRateLimited(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	p := newPage(t, pageOpts{now: clock})
	for i := 0; i < 5; i++ {
		res, _ := p.do("GET", "/login?code=wrong", "", nil)
		// The fifth is told it locked the address out.
		if want := map[bool]int{true: http.StatusTooManyRequests, false: http.StatusUnauthorized}[i == 4]; res.StatusCode != want {
			t.Fatalf("wrong login %d: %d, want %d", i+1, res.StatusCode, want)
		}
	}
	// Past the limit even the right token waits: a guesser learns nothing.
	// A phone gets a page it can read, saying when to try again.
	res, body := p.do("GET", p.link(), "", nil)
	if res.StatusCode != http.StatusTooManyRequests || len(res.Cookies()) != 0 || res.Header.Get("Retry-After") != "60" {
		t.Fatalf("login after 5 failures: %d Retry-After %q %s, want 429 with Retry-After 60 and no cookie", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") || !strings.Contains(body, "Try again in 60 seconds") || !strings.Contains(body, "127.0.0.1") {
		t.Fatalf("the lockout answer: Content-Type %q\n%s\nwant an HTML page naming the address and when to try again", ct, body)
	}
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	p.login()
}

// loginFrom sends a sign-in request to the real handler as if from
// remote (an address a test cannot bind), with extra headers.
func (p *page) loginFrom(remote, query string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", p.base+"/login?"+query, nil)
	req.RemoteAddr = remote
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	p.srv.ServeHTTP(rec, req)
	return rec
}

// TestLoginLimitIsPerSource: a flood of wrong tokens from one address
// locks out that address only; the phone elsewhere signs in.
func TestLoginLimitIsPerSource(t *testing.T) {
	p := newPage(t, pageOpts{})
	for i := 0; i < 50; i++ {
		p.loginFrom("192.0.2.66:40000", "code=wrong")
	}
	if rec := p.loginFrom("192.0.2.66:40001", p.code()); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("the flooding address with the right token: %d, want 429", rec.Code)
	}
	for _, remote := range []string{"192.0.2.7:5555", "[2001:db8:1::7]:5555"} {
		if rec := p.loginFrom(remote, p.code()); rec.Code != http.StatusSeeOther {
			t.Fatalf("another address (%s) with the right token while 192.0.2.66 floods: %d %s, want 303", remote, rec.Code, rec.Body)
		}
	}
	// One IPv6 host has a whole /64: its addresses are one source.
	for i := 0; i < 5; i++ {
		p.loginFrom(fmt.Sprintf("[2001:db8:2::%x]:1", i+1), "code=wrong")
	}
	if rec := p.loginFrom("[2001:db8:2::99]:1", p.code()); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("a fresh address in a locked /64: %d, want 429", rec.Code)
	}
}

// TestLockoutGrows: each lockout of one source lasts twice the one
// before; signing in with the right link clears the record.
func TestLockoutGrows(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	p := newPage(t, pageOpts{now: clock})
	const from = "198.51.100.9:7000"
	for _, want := range []int{60, 120, 240, 480} {
		for i := 0; i < 5; i++ {
			p.loginFrom(from, "code=wrong")
		}
		rec := p.loginFrom(from, p.code())
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != fmt.Sprint(want) {
			t.Fatalf("lockout: %d Retry-After %q, want 429 for %d s", rec.Code, rec.Header().Get("Retry-After"), want)
		}
		advance(time.Duration(want+1) * time.Second)
	}
	// A quiet hour since the last lockout's end forgets the source.
	for i := 0; i < 5; i++ {
		p.loginFrom(from, "code=wrong")
	}
	if rec := p.loginFrom(from, p.code()); rec.Header().Get("Retry-After") != "960" {
		t.Fatalf("the fifth lockout: Retry-After %q, want 960", rec.Header().Get("Retry-After"))
	}
	advance(960*time.Second + time.Hour + time.Second)
	for i := 0; i < 5; i++ {
		p.loginFrom(from, "code=wrong")
	}
	if rec := p.loginFrom(from, p.code()); rec.Header().Get("Retry-After") != "60" {
		t.Fatalf("after a quiet hour the next lockout: Retry-After %q, want 60 again", rec.Header().Get("Retry-After"))
	}
	advance(61 * time.Second)
	if rec := p.loginFrom(from, p.code()); rec.Code != http.StatusSeeOther {
		t.Fatalf("after the lockout, the right link: %d, want 303", rec.Code)
	}
	for i := 0; i < 5; i++ {
		p.loginFrom(from, "code=wrong")
	}
	if rec := p.loginFrom(from, p.code()); rec.Header().Get("Retry-After") != "60" {
		t.Fatalf("after a sign-in the next lockout: Retry-After %q, want 60 again", rec.Header().Get("Retry-After"))
	}
}

// TestImageTagsDoNotCount: <img src=".../login?token=x"> on any page the
// person visits loads the link as an image; refused unseen, it never
// counts, so it cannot keep the right link out.
func TestImageTagsDoNotCount(t *testing.T) {
	p := newPage(t, pageOpts{})
	for i := 0; i < 20; i++ {
		rec := p.loginFrom("127.0.0.1:40000", "code=wrong", "Sec-Fetch-Dest", "image", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Site", "cross-site")
		if rec.Code != http.StatusForbidden {
			t.Fatalf("a sign-in loaded as an image: %d, want 403", rec.Code)
		}
	}
	rec := p.loginFrom("127.0.0.1:40001", p.code(), "Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", "none")
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("the right link opened in the address bar after 20 <img> loads: %d %s, want 303", rec.Code, rec.Body)
	}
}

// TestLoginSourcesAreBounded: wrong tokens from 5000 addresses keep the
// table at its bound, and a locked source that keeps failing stays locked.
func TestLoginSourcesAreBounded(t *testing.T) {
	p := newPage(t, pageOpts{})
	for i := 0; i < 5; i++ {
		p.loginFrom("192.0.2.1:1", "code=wrong")
	}
	for i := 0; i < 5000; i++ {
		p.loginFrom(fmt.Sprintf("10.%d.%d.%d:1", i>>16&255, i>>8&255, i&255), "code=wrong")
		if i%100 == 0 {
			p.loginFrom("192.0.2.1:1", "code=wrong") // the locked one keeps trying
		}
	}
	if n := p.srv.logins.size(); n > 1024 {
		t.Fatalf("the table of sources holds %d after 5000 addresses, want at most 1024", n)
	}
	if rec := p.loginFrom("192.0.2.1:1", p.code()); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("the locked source after the flood of others: %d, want still 429", rec.Code)
	}
}

func TestRotationEndsOldCookies(t *testing.T) {
	p := newPage(t, pageOpts{})
	p.login()
	old := p.token()
	csrf := p.csrf()
	before := p.link()
	oldCookie := p.cookies()[0].Value
	if err := Rotate(p.tokenPath); err != nil {
		t.Fatal(err)
	}
	if p.token() == old {
		t.Fatal("Rotate wrote the same token")
	}
	if st, _ := os.Stat(p.tokenPath); st.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %#o, want 0600", st.Mode().Perm())
	}
	res, body := p.do("GET", "/api/sessions", "", nil)
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("old cookie after rotation: %d %s, want 401", res.StatusCode, body)
	}
	res, _ = p.post("/api/seen", `{"sessionId":"s1"}`, csrf, nil)
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("old cookie and CSRF token after rotation: %d, want 401", res.StatusCode)
	}
	p.client.Jar, _ = cookiejar.New(nil) // a browser with no cookie opens a link made before
	res, body = p.do("GET", before, "", nil)
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "rotated") {
		t.Fatalf("a link made before the rotation: %d %s, want 401 saying the token was rotated", res.StatusCode, body)
	}
	// A server started afresh on the new token (a restart) does not take the old cookie either.
	tokens, err := NewTokens(p.tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	if tokens.checkCookie(oldCookie, time.Now()) {
		t.Fatal("a fresh server accepts a cookie of the old token")
	}
	p.login()
}

func TestTokenFileOthersCanReadIsRefused(t *testing.T) {
	p := newPage(t, pageOpts{})
	p.login()
	if err := os.Chmod(p.tokenPath, 0o644); err != nil {
		t.Fatal(err)
	}
	// Touch it so the server reads it again.
	later := time.Now().Add(time.Second)
	_ = os.Chtimes(p.tokenPath, later, later)
	res, _ := p.do("GET", "/api/sessions", "", nil)
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("token file 0644: %d, want 401", res.StatusCode)
	}
	if _, err := NewTokens(p.tokenPath); err == nil || !strings.Contains(err.Error(), "0644") {
		t.Fatalf("NewTokens on a 0644 file: %v, want an error naming the mode", err)
	}
}

func TestPageHasStrictCSPAndNoInlineScript(t *testing.T) {
	p := newPage(t, pageOpts{})
	p.login()
	res, body := p.do("GET", "/", "", nil)
	if res.StatusCode != 200 || !strings.Contains(body, `src="/app.js"`) {
		t.Fatalf("GET / signed in: %d, want the page", res.StatusCode)
	}
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("CSP allows unsafe: %q", csp)
	}
	for _, f := range []string{"static/index.html", "static/signin.html"} {
		b, _ := staticFiles.ReadFile(f)
		if m := regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]+</script>|\son[a-z]+=`).Find(b); m != nil {
			t.Errorf("%s has inline script: %s", f, m)
		}
	}
	res, _ = p.do("GET", "/app.js", "", nil)
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("app.js: Content-Type %q nosniff %q", res.Header.Get("Content-Type"), res.Header.Get("X-Content-Type-Options"))
	}
}

// TestReplayedPromptIsRefused answers the real demo agent's permission
// prompt twice with the promptId the page showed: the first is typed, the
// second gets runtime_answer's own error and types nothing.
func TestReplayedPromptIsRefused(t *testing.T) {
	d, id := startDaemon(t)
	p := newPage(t, pageOpts{dial: d.dial()})
	blocked := d.blockDemo(id)
	p.login()
	// The page learns what it shows, not the argv, pid or environment. It
	// hears of the prompt from its own feed, which may come a moment after
	// the daemon said blocked to this test.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, list := p.do("GET", "/api/sessions", "", nil)
		if res.StatusCode != 200 || strings.Contains(list, `"argv"`) || strings.Contains(list, `"pid"`) {
			t.Fatalf("/api/sessions: %d %s; want the sessions and no argv or pid", res.StatusCode, list)
		}
		if strings.Contains(list, blocked.Prompt.ID) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/api/sessions did not list prompt %s within 30 s of the daemon's blocked: %s", blocked.Prompt.ID, list)
		}
	}
	csrf := p.csrf()
	body := fmt.Sprintf(`{"sessionId":%q,"promptId":%q,"optionId":"1"}`, id, blocked.Prompt.ID)
	res, out := p.post("/api/answer", body, csrf, func(r *http.Request) { r.Header.Set("User-Agent", "phone-test/1") })
	if res.StatusCode != 200 {
		t.Fatalf("first answer: %d %s", res.StatusCode, out)
	}
	var ans protocol.AnswerResult
	_ = json.Unmarshal([]byte(out), &ans)
	if ans.State == "blocked" {
		t.Fatalf("first answer left it blocked: %s", out)
	}
	res, out = p.post("/api/answer", body, csrf, nil)
	var e apiError
	_ = json.Unmarshal([]byte(out), &e)
	if res.StatusCode != http.StatusConflict || (e.Code != protocol.CodePromptStale && e.Code != protocol.CodeAlreadyAnswered) || e.Error == "" {
		t.Fatalf("replayed answer: %d %s, want 409 with -32021 or -32025 and the daemon's message", res.StatusCode, out)
	}
	// Nothing was typed: the demo agent went on to run its command and
	// finish, with no second "1" in its draft.
	done := d.waitState(id, "done")
	var screen protocol.ReadResult
	if err := d.c.Call(t.Context(), "session/read", protocol.SessionRef{SessionID: id}, &screen); err != nil {
		t.Fatal(err)
	}
	if last := screen.Rows[len(screen.Rows)-1]; strings.Contains(strings.Join(screen.Rows, "\n"), "> 1") {
		t.Fatalf("the replay was typed; screen ends %q", last)
	}
	_ = done
	log := p.logText()
	if !strings.Contains(log, "web: answer") || !strings.Contains(log, "ua=phone-test/1") || !strings.Contains(log, "remote=127.0.0.1:") {
		t.Fatalf("the answer is not logged with where it came from:\n%s", log)
	}
}

// TestInputNeedsAllowInput: typing into an agent is its own opt-in.
func TestInputNeedsAllowInput(t *testing.T) {
	d, id := startDaemon(t)
	d.waitState(id, "idle")
	off := newPage(t, pageOpts{dial: d.dial()})
	off.login()
	body := fmt.Sprintf(`{"sessionId":%q,"text":"make notes","submit":true}`, id)
	res, out := off.post("/api/send", body, off.csrf(), nil)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(out, "--allow-input") {
		t.Fatalf("send without --allow-input: %d %s, want 403 naming the flag", res.StatusCode, out)
	}
	on := newPage(t, pageOpts{dial: d.dial(), allowInput: true})
	on.login()
	res, out = on.post("/api/send", body, on.csrf(), nil)
	if res.StatusCode != 200 {
		t.Fatalf("send with --allow-input: %d %s", res.StatusCode, out)
	}
	d.waitState(id, "blocked")
	// While it waits on its prompt, typing is refused by the daemon's guard.
	res, out = on.post("/api/send", body, on.csrf(), nil)
	if res.StatusCode != http.StatusConflict || !strings.Contains(out, fmt.Sprint(protocol.CodeSessionBlocked)) {
		t.Fatalf("send while blocked: %d %s, want 409 -32020", res.StatusCode, out)
	}
	if !strings.Contains(on.logText(), "web: input") {
		t.Fatal("the input is not logged")
	}
}

// TestPageHearsOfNewAndEndedSessions: an open page's live feed lists a
// session started after it opened, and its end.
func TestPageHearsOfNewAndEndedSessions(t *testing.T) {
	d, _ := startDaemon(t)
	p := newPage(t, pageOpts{dial: d.dial()})
	p.login()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", p.base+"/api/events", nil)
	res, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	events := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				events <- name + " " + v
			}
		}
		close(events)
	}()
	var s protocol.Session
	if err := d.c.Call(t.Context(), "session/spawn", protocol.SpawnParams{Argv: []string{"sleep", "600"}, Cwd: t.TempDir(), Name: "late-comer"}, &s); err != nil {
		t.Fatal(err)
	}
	await := func(what string, ok func(string) bool) {
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
					return
				}
				seen = append(seen, ev[:min(len(ev), 120)])
			case <-deadline:
				t.Fatalf("waited 60 s for %s on the page's feed; saw %q", what, seen)
			}
		}
	}
	await("the new session", func(ev string) bool { return strings.Contains(ev, `"late-comer"`) })
	if err := d.c.Call(t.Context(), "session/kill", protocol.KillParams{SessionID: s.SessionID, Signal: "KILL"}, nil); err != nil {
		t.Fatal(err)
	}
	await("its end", func(ev string) bool {
		return strings.Contains(ev, `"late-comer"`) && strings.Contains(ev, `"state":"exited"`)
	})
}

// Under TLS a page's origin is https: an http origin of the same name is
// another origin (a downgraded or injected page) and is refused.
func TestTLSRefusesHTTPOrigins(t *testing.T) {
	tokens, err := NewTokens(t.TempDir() + "/web-token")
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Tokens: tokens, TLS: true, Hosts: []string{"box.example:8443"}})
	for origin, want := range map[string]bool{"https://box.example:8443": true, "http://box.example:8443": false, "https://other.example:8443": false} {
		if got := s.originAllowed(origin); got != want {
			t.Errorf("TLS server, Origin %q: allowed %v, want %v", origin, got, want)
		}
	}
}

// TestRotationEndsOpenStreams: a page's live feed opened before
// `agentd web --rotate` ends at the rotation, telling the page why,
// instead of sending screens to a browser whose cookie is void.
func TestRotationEndsOpenStreams(t *testing.T) {
	p := newPage(t, pageOpts{})
	p.login()
	events := p.stream("/api/events")
	awaitEvent(t, events, "the first snapshot", func(ev sse) bool { return ev.name == "sessions" })
	if err := Rotate(p.tokenPath); err != nil {
		t.Fatal(err)
	}
	rest := awaitEnd(t, events, "after agentd web --rotate")
	if len(rest) == 0 || rest[len(rest)-1].name != "signed-out" || !strings.Contains(rest[len(rest)-1].data, "--rotate") {
		t.Fatalf("the stream's last events %v, want a signed-out event naming --rotate", rest)
	}
	if !strings.Contains(p.logText(), "closed an event stream") {
		t.Error("the closing is not logged")
	}
}

// TestExpiryEndsOpenStreams: a stream opened a second before its cookie
// expires ends when it does.
func TestExpiryEndsOpenStreams(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	p := newPage(t, pageOpts{now: clock})
	p.login()
	mu.Lock()
	now = now.Add(30*24*time.Hour - time.Second)
	mu.Unlock()
	events := p.stream("/api/events")
	awaitEvent(t, events, "the first snapshot", func(ev sse) bool { return ev.name == "sessions" })
	rest := awaitEnd(t, events, "its cookie's expiry")
	if len(rest) == 0 || rest[len(rest)-1].name != "signed-out" || !strings.Contains(rest[len(rest)-1].data, "expired") {
		t.Fatalf("the stream's last events %v, want a signed-out event saying the sign-in expired", rest)
	}
}

// freshBrowser is another browser (an empty cookie jar) for the same page server.
func (p *page) freshBrowser() *page {
	q := *p
	jar, _ := cookiejar.New(nil)
	c := *p.client
	c.Jar = jar
	q.client = &c
	return &q
}

// TestLinkSignsInOnce: the link left in a browser's history (and synced
// to the person's other devices) signs nobody in: its code is spent.
func TestLinkSignsInOnce(t *testing.T) {
	p := newPage(t, pageOpts{})
	link := p.link()
	if strings.Contains(link, p.token()) {
		t.Fatalf("the link %s carries the token", link)
	}
	res, _ := p.do("GET", link, "", nil)
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("the link, first time: %d, want 303 and a cookie", res.StatusCode)
	}
	// Opened again where it signed in (a reload): the page, nothing spent.
	if res, _ := p.do("GET", link, "", nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("the link again in the browser it signed in: %d, want 303 to /", res.StatusCode)
	}
	other := p.freshBrowser()
	res, body := other.do("GET", link, "", nil)
	if res.StatusCode != http.StatusUnauthorized || len(res.Cookies()) != 0 || !strings.Contains(body, "used already") ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("the used link in another browser: %d %s, want 401, no cookie, a page saying it was used", res.StatusCode, body)
	}
}

// TestTokenInALinkIsRefused: the long-lived token never signs in from a
// URL, not even the right one (an old link, a bookmark).
func TestTokenInALinkIsRefused(t *testing.T) {
	p := newPage(t, pageOpts{})
	res, body := p.do("GET", "/login?token="+p.token(), "", nil)
	if res.StatusCode == http.StatusSeeOther || len(res.Cookies()) != 0 || !strings.Contains(body, "one-time code") {
		t.Fatalf("/login?token=<the right token>: %d cookies %v %s, want refused, naming the one-time codes", res.StatusCode, res.Cookies(), body)
	}
}

// TestLinkExpires: a link not used within its life signs nobody in, and
// saying so does not count as a guess.
func TestLinkExpires(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	p := newPage(t, pageOpts{now: clock})
	l, err := p.srv.NewLink(p.base, PrintedLinkLife)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(PrintedLinkLife)
	mu.Unlock()
	res, body := p.do("GET", strings.TrimPrefix(l, p.base), "", nil)
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "expired") {
		t.Fatalf("a printed link after %v: %d %s, want 401 saying it expired", PrintedLinkLife, res.StatusCode, body)
	}
	if n := p.srv.logins.size(); n != 0 {
		t.Fatalf("an expired link counted as a failure (%d sources)", n)
	}
}

// TestPageMakesALinkForAnotherDevice: a signed-in page makes a one-time
// link (and its QR code) on its own origin for a second device.
func TestPageMakesALinkForAnotherDevice(t *testing.T) {
	p := newPage(t, pageOpts{})
	p.login()
	if res, body := p.post("/api/link", `{}`, "", nil); res.StatusCode != http.StatusForbidden {
		t.Fatalf("POST /api/link without the CSRF token: %d %s, want 403", res.StatusCode, body)
	}
	res, body := p.post("/api/link", `{}`, p.csrf(), nil)
	var l struct {
		Link             string
		ExpiresInSeconds int
		QR               []string
	}
	if err := json.Unmarshal([]byte(body), &l); err != nil || res.StatusCode != 200 || !strings.HasPrefix(l.Link, p.base+"/login?code=") ||
		l.ExpiresInSeconds != 600 || len(l.QR) < 21 || len(l.QR[0]) != len(l.QR) {
		t.Fatalf("POST /api/link: %d %s, want a link on %s, 600 s, a square QR code", res.StatusCode, body, p.base)
	}
	phone := p.freshBrowser()
	if res, _ := phone.do("GET", strings.TrimPrefix(l.Link, p.base), "", nil); res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("the second device opens the link: %d, want 303 and a cookie", res.StatusCode)
	}
	if res, _ := p.freshBrowser().do("GET", strings.TrimPrefix(l.Link, p.base), "", nil); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a third browser opens the same link: %d, want 401", res.StatusCode)
	}
}

// TestStreamSendsKeepAlives: the feed sends a "ping" event the page can
// see (a comment line never reaches its script), and /api/hello says how
// often, so a page that stops hearing them knows it is stale.
func TestStreamSendsKeepAlives(t *testing.T) {
	p := newPage(t, pageOpts{keepAlive: 50 * time.Millisecond})
	p.login()
	_, hello := p.do("GET", "/api/hello", "", nil)
	if !strings.Contains(hello, `"keepAliveMs":50`) {
		t.Fatalf("/api/hello %s, want keepAliveMs 50", hello)
	}
	events := p.stream("/api/events")
	for i := 0; i < 2; i++ {
		awaitEvent(t, events, fmt.Sprintf("keep-alive ping %d", i+1), func(ev sse) bool { return ev.name == "ping" })
	}
}

// TestPrefetchDoesNotSpendALink: a browser fetching the link ahead of the
// person (Sec-Purpose: prefetch) leaves its code for the real visit.
func TestPrefetchDoesNotSpendALink(t *testing.T) {
	p := newPage(t, pageOpts{})
	q := p.code()
	if rec := p.loginFrom("127.0.0.1:1", q, "Sec-Purpose", "prefetch;prerender"); rec.Code == http.StatusSeeOther || len(rec.Result().Cookies()) != 0 {
		t.Fatalf("a prefetch of the link: %d, want no sign-in", rec.Code)
	}
	if rec := p.loginFrom("127.0.0.1:1", q); rec.Code != http.StatusSeeOther {
		t.Fatalf("the link opened after a prefetch: %d %s, want 303", rec.Code, rec.Body)
	}
}

package web

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TokenBytes is the access token's size: 256 random bits, well past the
// 128 a guess must beat.
const TokenBytes = 32

// Tokens reads the access token from its file. The file is read again
// when it changes, so `agentd web --rotate` in another terminal voids the
// cookies of a page server already running.
type Tokens struct {
	path string

	mu    sync.Mutex
	token []byte
	mod   time.Time
	size  int64
	// gen counts changes of the token (a rotation, or the file turning
	// unusable); changed is closed at the next one, so open event streams
	// hear of a rotation at once instead of polling the file each.
	gen     uint64
	changed chan struct{}
}

// NewTokens reads the token at path, making one (0600, in a 0700 folder)
// when there is none.
func NewTokens(path string) (*Tokens, error) {
	t := &Tokens{path: path, changed: make(chan struct{})}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := Rotate(path); err != nil {
			return nil, err
		}
	}
	if _, err := t.current(); err != nil {
		return nil, err
	}
	return t, nil
}

// Rotate writes a new random token to path: every link and cookie made
// from the old one stops working.
func Rotate(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b := make([]byte, TokenBytes)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(base64.RawURLEncoding.EncodeToString(b)+"\n"), 0o600); err != nil {
		return err
	}
	// WriteFile keeps an existing file's mode: make sure of 0600.
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// current is the token now in the file.
func (t *Tokens) current() ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st, err := os.Stat(t.path)
	if err != nil {
		t.lost()
		return nil, fmt.Errorf("web token %s: %w", t.path, err)
	}
	if st.ModTime().Equal(t.mod) && st.Size() == t.size && t.token != nil {
		return t.token, nil
	}
	if st.Mode().Perm()&0o077 != 0 {
		t.lost()
		return nil, fmt.Errorf("web token %s: mode %#o lets others read it; run `agentd web --rotate` for a new one (0600)", t.path, st.Mode().Perm())
	}
	b, err := os.ReadFile(t.path)
	if err != nil {
		t.lost()
		return nil, fmt.Errorf("web token %s: %w", t.path, err)
	}
	tok := []byte(strings.TrimSpace(string(b)))
	if raw, err := base64.RawURLEncoding.DecodeString(string(tok)); err != nil || len(raw) < 16 {
		t.lost()
		return nil, fmt.Errorf("web token %s: not a token of at least 128 bits; run `agentd web --rotate`", t.path)
	}
	if t.token != nil && subtle.ConstantTimeCompare(tok, t.token) != 1 {
		t.bump()
	}
	t.token, t.mod, t.size = tok, st.ModTime(), st.Size()
	return t.token, nil
}

// lost forgets a token whose file went missing or unusable: everything
// made from it stops working, as after a rotation. Called with t.mu held.
func (t *Tokens) lost() {
	if t.token != nil {
		t.token, t.mod, t.size = nil, time.Time{}, 0
		t.bump()
	}
}

// bump tells whoever waits on Changed that the token changed. Called with t.mu held.
func (t *Tokens) bump() {
	t.gen++
	close(t.changed)
	t.changed = make(chan struct{})
}

// changes is a channel closed at the token's next change, and the
// generation it belongs to: comparing generations is the cheap check an
// event stream makes before each event.
func (t *Tokens) changes() (<-chan struct{}, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.changed, t.gen
}

func (t *Tokens) generation() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.gen
}

// Watch reads the token file every interval until ctx ends, so a
// rotation in another terminal closes open event streams even when no
// request comes in to notice it.
func (t *Tokens) Watch(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_, _ = t.current()
		}
	}
}

// mac is HMAC-SHA256 keyed by the current token: the cookie and the CSRF
// token are derived from it, so a new token voids both, across restarts,
// with nothing stored.
func mac(key []byte, parts ...string) string {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// cookieLife is how long a signed-in browser stays signed in.
const cookieLife = 30 * 24 * time.Hour

// newCookie is "<issued unix seconds>.<mac>".
func (t *Tokens) newCookie(now time.Time) (string, error) {
	key, err := t.current()
	if err != nil {
		return "", err
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	return ts + "." + mac(key, "cookie", ts), nil
}

// checkCookie says whether the cookie was made from the current token and
// has not expired.
func (t *Tokens) checkCookie(v string, now time.Time) bool {
	key, err := t.current()
	if err != nil {
		return false
	}
	ts, sum, ok := strings.Cut(v, ".")
	if !ok {
		return false
	}
	want := mac(key, "cookie", ts)
	if subtle.ConstantTimeCompare([]byte(sum), []byte(want)) != 1 {
		return false
	}
	issued, ok := cookieIssued(v)
	return ok && !issued.After(now.Add(time.Minute)) && now.Sub(issued) < cookieLife
}

// cookieIssued is when a cookie was made (its first part); the MAC is
// checkCookie's business.
func cookieIssued(v string) (time.Time, bool) {
	ts, _, _ := strings.Cut(v, ".")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}

// csrf is the token a page sends with every state-changing request: bound
// to its cookie, so one page's token is no good with another's cookie.
func (t *Tokens) csrf(cookie string) (string, error) {
	key, err := t.current()
	if err != nil {
		return "", err
	}
	return mac(key, "csrf", cookie), nil
}

func (t *Tokens) checkCSRF(cookie, presented string) bool {
	want, err := t.csrf(cookie)
	if err != nil || presented == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(presented), []byte(want)) == 1
}

// limiter counts failed logins per source (remote address): past max
// within window a source is locked out, for base at first and twice as
// long at each lockout after (up to longest), the right token or code
// too, so guessing gains nothing. Other sources are not touched: a flood
// from one address never locks out another. A source is forgotten after
// longest has passed quietly since its last failure or lockout, and the
// table holds at most maxSources (the least recently failing go first).
type limiter struct {
	mu         sync.Mutex
	max        int
	window     time.Duration
	base       time.Duration
	longest    time.Duration
	maxSources int
	sources    map[string]*source
}

// source is one remote address's record of failures.
type source struct {
	failures []time.Time // within the window, at most max
	lockouts int         // lockouts so far: the next lasts base << lockouts
	until    time.Time   // locked out until then
	last     time.Time   // the last failure or refused attempt
}

func newLimiter(max int, window, base, longest time.Duration, maxSources int) *limiter {
	return &limiter{max: max, window: window, base: base, longest: longest, maxSources: maxSources, sources: map[string]*source{}}
}

// locked says until when key is locked out, if it is now.
func (l *limiter) locked(key string, now time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	src := l.sources[key]
	if src != nil && l.forgotten(src, now) {
		delete(l.sources, key)
		src = nil
	}
	if src == nil || !now.Before(src.until) {
		return time.Time{}, false
	}
	// A refused attempt keeps the record alive but does not lengthen the
	// lockout: the person retrying with the right link gets in at the time told.
	src.last = now
	return src.until, true
}

// fail counts a failed login from key; it returns the end of the lockout
// this failure started, or the zero time.
func (l *limiter) fail(key string, now time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	src := l.sources[key]
	if src != nil && l.forgotten(src, now) {
		delete(l.sources, key)
		src = nil
	}
	if src == nil {
		l.makeRoom(now)
		src = &source{}
		l.sources[key] = src
	}
	src.last = now
	i := 0
	for i < len(src.failures) && now.Sub(src.failures[i]) >= l.window {
		i++
	}
	src.failures = append(src.failures[i:], now)
	if len(src.failures) < l.max {
		return time.Time{}
	}
	d := l.longest
	if src.lockouts < 30 && l.base<<src.lockouts < l.longest {
		d = l.base << src.lockouts
	}
	src.lockouts++
	src.failures = src.failures[:0]
	src.until = now.Add(d)
	return src.until
}

// succeeded forgets key's failures: the person at that address has the link.
func (l *limiter) succeeded(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.sources, key)
}

// makeRoom keeps the table under maxSources before a new source is added:
// first the forgotten, then the least recently failing. Called with l.mu held.
func (l *limiter) makeRoom(now time.Time) {
	if len(l.sources) < l.maxSources {
		return
	}
	for k, src := range l.sources {
		if l.forgotten(src, now) {
			delete(l.sources, k)
		}
	}
	for len(l.sources) >= l.maxSources {
		var oldest string
		var at time.Time
		for k, src := range l.sources {
			if oldest == "" || src.last.Before(at) {
				oldest, at = k, src.last
			}
		}
		delete(l.sources, oldest)
	}
}

// forgotten: quiet for longest since its last failure and its lockout's
// end, a source starts again from no lockouts.
func (l *limiter) forgotten(src *source, now time.Time) bool {
	return now.Sub(src.last) > l.longest && now.Sub(src.until) > l.longest
}

func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sources)
}

// sourceKey is who a login attempt counts against: the remote IP, and for
// IPv6 its /64, which one host usually has whole. Behind a proxy on this
// machine (tailscale serve) every attempt is the proxy's, 127.0.0.1.
func sourceKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}

// Links' lives: the one agentd web prints when it starts, and one a
// signed-in page makes for another device (shown as a QR code to scan now).
const (
	PrintedLinkLife = 24 * time.Hour
	PageLinkLife    = 10 * time.Minute
)

// codes are the one-time sign-in codes that links carry instead of the
// token: each is exchanged once for a cookie, before it expires and under
// the token it was made with. They live in this process only, so a
// restart voids every unused one and a used one is never taken again.
type codes struct {
	mu  sync.Mutex
	max int
	m   map[[32]byte]*code // by the code's SHA-256: a lookup leaks nothing of the code
}

type code struct {
	expires time.Time
	token   [32]byte // SHA-256 of the token it was made under
	used    bool
}

// why a code did not sign in; only an unknown code counts as a guess.
const (
	codeUnknown = iota + 1
	codeUsed
	codeExpired
	codeRotated
)

func newCodes(max int) *codes { return &codes{max: max, m: map[[32]byte]*code{}} }

// make is a new code for token, good for life.
func (c *codes) make(token []byte, now time.Time, life time.Duration) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	v := base64.RawURLEncoding.EncodeToString(b)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.makeRoom(now)
	c.m[sha256.Sum256([]byte(v))] = &code{expires: now.Add(life), token: sha256.Sum256(token)}
	return v, nil
}

// redeem uses up the code presented, or says why it does not sign in.
func (c *codes) redeem(presented string, token []byte, now time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[sha256.Sum256([]byte(presented))]
	switch {
	case e == nil || presented == "":
		return codeUnknown
	case e.used:
		return codeUsed
	case !now.Before(e.expires):
		return codeExpired
	case e.token != sha256.Sum256(token):
		return codeRotated
	}
	// Kept, used, until it expires: opened again it says "used already".
	e.used = true
	return 0
}

// makeRoom keeps at most max codes: the expired go first, then the used,
// then the soonest to expire. Called with c.mu held.
func (c *codes) makeRoom(now time.Time) {
	for k, e := range c.m {
		if !now.Before(e.expires) {
			delete(c.m, k)
		}
	}
	for len(c.m) >= c.max {
		var drop [32]byte
		var worst *code
		for k, e := range c.m {
			if worst == nil || (e.used && !worst.used) || (e.used == worst.used && e.expires.Before(worst.expires)) {
				drop, worst = k, e
			}
		}
		delete(c.m, drop)
	}
}

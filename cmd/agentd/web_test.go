//go:build unix

package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/cmd/agentd/internal/cli"
)

// webCmd starts `agentd web` with its token in a folder of the test's own.
func webCmd(t *testing.T, d *daemonEnv, tokenFile string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(agentdBinary(t), append([]string{"web"}, args...)...)
	cmd.Env = append(append([]string(nil), d.env...), "AGENTD_WEB_TOKEN_FILE="+tokenFile)
	return cmd
}

func TestWebRefusesPlainHTTPOffLoopback(t *testing.T) {
	d := newDaemonEnv(t)
	token := filepath.Join(t.TempDir(), "web-token")
	for _, args := range [][]string{
		{"--listen", "0.0.0.0:0"},
		{"--listen", "192.0.2.1:7433"},
		{"--listen", "[::]:0"},
	} {
		cmd := webCmd(t, d, token, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != cli.ExitUsage || err == nil {
			t.Fatalf("agentd web %v: exit %d, want %d", args, code, cli.ExitUsage)
		}
		for _, want := range []string{"not loopback", "--tls-cert", "--trusted-network", "tailscale serve"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("agentd web %v: stderr %q lacks %q", args, stderr.String(), want)
			}
		}
	}
	if _, err := os.Stat(token); !os.IsNotExist(err) {
		t.Errorf("a refused start made a token file: %v", err)
	}
	cmd := webCmd(t, d, token, "--tls-cert", "x.pem")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	if cmd.ProcessState.ExitCode() != cli.ExitUsage || !strings.Contains(stderr.String(), "--tls-key") {
		t.Errorf("--tls-cert alone: exit %d %q, want 2 naming --tls-key", cmd.ProcessState.ExitCode(), stderr.String())
	}
}

// startWeb runs agentd web until the test ends and returns its link.
func startWeb(t *testing.T, d *daemonEnv, token string, args ...string) (link string, cmd *exec.Cmd, out []string) {
	t.Helper()
	cmd = webCmd(t, d, token, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(60 * time.Second)
	for link == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("agentd web %v ended before printing its link; it printed %q", args, out)
			}
			out = append(out, l)
			if strings.HasPrefix(l, "http") && strings.Contains(l, "/login?code=") {
				link = l
			}
		case <-deadline:
			t.Fatalf("agentd web %v: waited 60 s for its link; it printed %q", args, out)
		}
	}
	// The link is printed last: the rest of stdout is read already.
	go func() {
		for range lines {
		}
	}()
	return link, cmd, out
}

func TestWebTrustedNetworkStartsAndTheLinkSignsIn(t *testing.T) {
	d := newDaemonEnv(t)
	token := filepath.Join(t.TempDir(), "cfg", "web-token")
	link, cmd, out := startWeb(t, d, token, "--listen", "0.0.0.0:0", "--trusted-network", "--qr")
	st, err := os.Stat(token)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v mode %v, want 0600", err, st)
	}
	// The printed link carries a one-time code, never the token itself.
	b, _ := os.ReadFile(token)
	if strings.Contains(strings.Join(out, "\n"), strings.TrimSpace(string(b))) {
		t.Fatalf("agentd web printed the token of %s:\n%s", token, strings.Join(out, "\n"))
	}
	qr := strings.Join(out, "\n")
	if !strings.ContainsAny(qr, "█▀▄") {
		t.Fatalf("--qr printed no QR code:\n%s", qr)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
	res, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("GET the printed link: %d cookies %v, want 303 and a cookie", res.StatusCode, res.Cookies())
	}
	// It signs in once: opened again (from the history, by another device) it does not.
	again, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusUnauthorized || len(again.Cookies()) != 0 {
		t.Fatalf("GET the printed link a second time: %d cookies %v, want 401 and no cookie", again.StatusCode, again.Cookies())
	}
	// --rotate in another terminal voids the cookie of the server already running.
	rot := webCmd(t, d, token, "--rotate")
	if o, err := rot.CombinedOutput(); err != nil || !strings.Contains(string(o), "new token") {
		t.Fatalf("agentd web --rotate: %v %s", err, o)
	}
	req, _ := http.NewRequest("GET", strings.Split(link, "/login")[0]+"/api/sessions", nil)
	req.AddCookie(res.Cookies()[0])
	res2, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res2.Body.Close()
	if res2.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the old cookie after agentd web --rotate: %d, want 401", res2.StatusCode)
	}
	_ = cmd
}

// Behind tailscale serve: a --host name on a loopback server makes the
// printed link (and the QR code) the proxy's https one, the local one above it.
func TestWebLinkThroughAProxyName(t *testing.T) {
	d := newDaemonEnv(t)
	token := filepath.Join(t.TempDir(), "web-token")
	cmd := webCmd(t, d, token, "--listen", "127.0.0.1:0", "--host", "box.tailnet.ts.net")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	sc := bufio.NewScanner(stdout)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), "https://") {
			break
		}
	}
	out := strings.Join(lines, "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "https://box.tailnet.ts.net/login?code=") || !strings.Contains(out, "on this machine: http://127.0.0.1:") {
		t.Fatalf("agentd web --host box.tailnet.ts.net printed:\n%s", out)
	}
}

// With a certificate agentd web serves https off loopback: the cookie is
// Secure, HSTS is sent, and plain http to the port gets nothing useful.
func TestWebServesTLS(t *testing.T) {
	d := newDaemonEnv(t)
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	_, _, out := startWeb(t, d, filepath.Join(dir, "web-token"), "--listen", "0.0.0.0:0", "--tls-cert", certFile, "--tls-key", keyFile)
	// The certificate is for 127.0.0.1: this machine's own link.
	link := printedLink(out, "on this machine: ")
	if !strings.HasPrefix(link, "https://127.0.0.1:") {
		t.Fatalf("on this machine: %q, want https on 127.0.0.1; agentd web printed:\n%s", link, strings.Join(out, "\n"))
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 || !res.Cookies()[0].Secure || res.Header.Get("Strict-Transport-Security") == "" {
		t.Fatalf("GET the https link: %d cookies %v HSTS %q; want 303, one Secure cookie, HSTS", res.StatusCode, res.Cookies(), res.Header.Get("Strict-Transport-Security"))
	}
	plain, err := http.Get("http://" + strings.TrimPrefix(strings.Split(link, "/login")[0], "https://") + "/api/sessions")
	if err == nil {
		plain.Body.Close()
		if plain.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain http to the TLS port: %d, want 400 (no answer in clear text)", plain.StatusCode)
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// a pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agentd web test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// printedLink is the link on the line of agentd web's output that has
// label before it, or "".
func printedLink(out []string, label string) string {
	for _, l := range out {
		if _, after, ok := strings.Cut(l, label); ok {
			return after
		}
	}
	return ""
}

// TestWebTrustedNetworkPrintsReachableAddresses: on every address, the
// printed link (and the QR code) is one a phone can open, at one of the
// machine's own addresses; 127.0.0.1 is printed as this machine's; and
// each link signs in by its address.
func TestWebTrustedNetworkPrintsReachableAddresses(t *testing.T) {
	var want []string
	ifs, _ := net.Interfaces()
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				want = append(want, n.IP.String())
			}
		}
	}
	if len(want) == 0 {
		t.Skip("this machine has no IPv4 address but loopback: nothing another device could reach")
	}
	d := newDaemonEnv(t)
	link, _, out := startWeb(t, d, filepath.Join(t.TempDir(), "web-token"), "--listen", "0.0.0.0:0", "--trusted-network")
	all := strings.Join(out, "\n")
	if !strings.HasPrefix(link, "http://"+want[0]+":") {
		t.Fatalf("the printed link %q, want one on %s (this machine's addresses: %v); agentd web printed:\n%s", link, want[0], want, all)
	}
	for _, ip := range want {
		if !strings.Contains(all, "http://"+ip+":") {
			t.Errorf("no link on %s; agentd web printed:\n%s", ip, all)
		}
	}
	local := printedLink(out, "on this machine: ")
	if !strings.HasPrefix(local, "http://127.0.0.1:") {
		t.Fatalf("on this machine: %q, want a 127.0.0.1 link; agentd web printed:\n%s", local, all)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
	for _, l := range []string{link, local} {
		res, err := c.Get(l)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
			t.Fatalf("GET %s: %d, want 303 and a cookie (each printed link has a code of its own)", l, res.StatusCode)
		}
	}
}

// webAPI is a signed-in page's side of agentd web's API, as the page
// drives it: a cookie, the CSRF token, the page's origin.
type webAPI struct {
	t    *testing.T
	base string
	c    *http.Client
	csrf string
}

// signIn opens agentd web's printed link and asks /api/hello for the CSRF token.
func signIn(t *testing.T, link string) (*webAPI, map[string]any) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	w := &webAPI{t: t, base: strings.Split(link, "/login")[0], c: &http.Client{Jar: jar, Timeout: 60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	res, err := w.c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("GET the printed link: %d, want 303", res.StatusCode)
	}
	var hello map[string]any
	if code, body := w.get("/api/hello", &hello); code != 200 {
		t.Fatalf("/api/hello: %d %s", code, body)
	}
	w.csrf, _ = hello["csrf"].(string)
	return w, hello
}

func (w *webAPI) get(path string, v any) (int, string) {
	w.t.Helper()
	res, err := w.c.Get(w.base + path)
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if v != nil && res.StatusCode == 200 {
		if err := json.Unmarshal(b, v); err != nil {
			w.t.Fatalf("GET %s: %v in %s", path, err, b)
		}
	}
	return res.StatusCode, string(b)
}

func (w *webAPI) post(path string, body any) (int, string) {
	w.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", w.base+path, bytes.NewReader(b))
	req.Header.Set("Origin", w.base)
	req.Header.Set("X-CSRF-Token", w.csrf)
	req.Header.Set("Content-Type", "application/json")
	res, err := w.c.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(out)
}

// webHostsView is /api/sessions with --hosts.
type webHostsView struct {
	Sessions []struct {
		Host      string `json:"host"`
		SessionID string `json:"sessionId"`
		Name      string `json:"name"`
		State     string `json:"state"`
		Prompt    *struct {
			PromptID string `json:"promptId"`
			Subject  *struct {
				Text string `json:"text"`
			} `json:"subject"`
			Options []struct {
				ID    string `json:"id"`
				Label string `json:"label"`
			} `json:"options"`
		} `json:"prompt"`
	} `json:"sessions"`
	Hosts []struct {
		Name      string `json:"name"`
		State     string `json:"state"`
		Error     string `json:"error"`
		RetryInMs int64  `json:"retryInMs"`
	} `json:"hosts"`
}

func (v webHostsView) host(name string) (state, err string) {
	for _, h := range v.Hosts {
		if h.Name == name {
			return h.State, h.Error
		}
	}
	return "", ""
}

// await polls /api/sessions until ok says yes (60 s).
func (w *webAPI) await(what string, ok func(webHostsView) bool) webHostsView {
	w.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var v webHostsView
		code, body := w.get("/api/sessions", &v)
		if code == 200 && ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("waited 60 s for %s; /api/sessions: %d %s", what, code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The page across hosts: agentd web --hosts shows this machine and two
// others (real OpenSSH servers on loopback, each its own daemon), whose
// sessions have the same name (and, each daemon counting from its first,
// the same id) and the same prompt. Each session is listed under its
// host; an answer for a's reaches a alone (b's prompt still waits, its
// promptId the same); a's promptId sent for b's session is refused there;
// an answer with no host, or an unknown one, goes nowhere. b taken off the
// network is shown reconnecting or down with the reason, an answer for it
// is refused without reaching anything, and when b comes back its session
// is there, waiting on the same prompt, and can be answered.
func TestWebHostsOverSSH(t *testing.T) {
	d, _, b := twoHosts(t)

	ids := map[string]string{}
	for _, host := range []string{"local", "a", "b"} {
		ids[host] = d.runDemo(host)
	}
	t.Logf("session ids: %v", ids)
	for _, host := range []string{"a", "b"} {
		d.demoAsks(host)
	}

	token := filepath.Join(t.TempDir(), "web-token")
	logFile := filepath.Join(t.TempDir(), "web.log")
	link := startWebLogged(t, d, token, logFile, "--hosts", "--listen", "127.0.0.1:0")
	w, hello := signIn(t, link)
	if fmt.Sprint(hello["hosts"]) != "[local a b]" {
		t.Fatalf("/api/hello hosts: %v, want [local a b]", hello["hosts"])
	}

	// Both blocked on the same question about the same command, each
	// listed under its host.
	sess := func(v webHostsView, host string) (id, state, prompt, subject, option string) {
		for _, s := range v.Sessions {
			if s.Host == host && s.Name == "demo" {
				id, state = s.SessionID, s.State
				if s.Prompt != nil {
					prompt = s.Prompt.PromptID
					if s.Prompt.Subject != nil {
						subject = s.Prompt.Subject.Text
					}
					if len(s.Prompt.Options) > 0 {
						option = s.Prompt.Options[0].ID
					}
				}
			}
		}
		return
	}
	v := w.await("a's and b's demo blocked, all three hosts up", func(v webHostsView) bool {
		_, sa, _, _, _ := sess(v, "a")
		_, sb, _, _, _ := sess(v, "b")
		up := true
		for _, h := range []string{"local", "a", "b"} {
			st, _ := v.host(h)
			up = up && st == "up"
		}
		return up && sa == "blocked" && sb == "blocked"
	})
	prompts, options := map[string]string{}, map[string]string{}
	for _, host := range []string{"local", "a", "b"} {
		id, _, p, subj, opt := sess(v, host)
		if id != ids[host] {
			t.Fatalf("host %s's demo: id %q, want %q; %+v", host, id, ids[host], v.Sessions)
		}
		if host != "local" && subj != "touch NOTES.md" {
			t.Fatalf("host %s's demo asks about %q, want touch NOTES.md", host, subj)
		}
		prompts[host], options[host] = p, opt
	}
	if len(v.Sessions) != 3 {
		t.Fatalf("/api/sessions lists %d sessions, want 3 (one per host): %+v", len(v.Sessions), v.Sessions)
	}
	if prompts["a"] == "" || prompts["a"] == prompts["b"] {
		t.Fatalf("a's and b's promptIds: %q and %q; want two different ids", prompts["a"], prompts["b"])
	}
	sameID := ids["a"] == ids["b"]
	t.Logf("a's and b's sessions share the id %q: %v", ids["a"], sameID)

	// Nowhere to go: no host, an unknown host.
	if code, body := w.post("/api/answer", map[string]string{"sessionId": ids["a"], "promptId": prompts["a"], "optionId": options["a"]}); code != 400 || !strings.Contains(body, "host") {
		t.Fatalf("an answer without its host: %d %s, want 400 asking for the host", code, body)
	}
	if code, body := w.post("/api/answer", map[string]string{"host": "c", "sessionId": ids["a"], "promptId": prompts["a"], "optionId": options["a"]}); code != 404 {
		t.Fatalf("an answer for host c: %d %s, want 404", code, body)
	}
	// a's promptId sent for b's session: refused by b, nothing typed there.
	code, body := w.post("/api/answer", map[string]string{"host": "b", "sessionId": ids["b"], "promptId": prompts["a"], "optionId": options["a"]})
	if code != http.StatusConflict || !(strings.Contains(body, "-32021") || strings.Contains(body, "-32025")) {
		t.Fatalf("a's promptId for b's session: %d %s, want 409 with -32021 or -32025", code, body)
	}
	// Answered for a: a goes on, b still waits on the same prompt.
	if code, body := w.post("/api/answer", map[string]string{"host": "a", "sessionId": ids["a"], "promptId": prompts["a"], "optionId": options["a"]}); code != 200 {
		t.Fatalf("answering a's demo: %d %s", code, body)
	}
	w.await("a's demo to finish its turn", func(v webHostsView) bool {
		_, sa, _, _, _ := sess(v, "a")
		return sa == "done" || sa == "idle"
	})
	time.Sleep(500 * time.Millisecond) // what b would show, had anything reached it
	v = w.await("b's state", func(webHostsView) bool { return true })
	if _, sb, pb, _, _ := sess(v, "b"); sb != "blocked" || pb != prompts["b"] {
		t.Fatalf("b's demo after a's answer: %s on %q; want blocked on %s still", sb, pb, prompts["b"])
	}
	out, errOut, code2 := d.cli("ls", "-H", "b", "--json")
	var bl sessionList
	if code2 != 0 || json.Unmarshal([]byte(out), &bl) != nil || len(bl.Sessions) != 1 || bl.Sessions[0].State != "blocked" || bl.Sessions[0].Prompt == nil || bl.Sessions[0].Prompt.PromptID != prompts["b"] {
		t.Fatalf("ls -H b after a's answer: exit %d\n%s%s; want b's demo blocked on %s", code2, out, errOut, prompts["b"])
	}

	// b goes off the network: shown reconnecting or down with ssh's words;
	// an answer for it reaches nothing; a and this machine stay up.
	b.Down()
	v = w.await("b shown down", func(v webHostsView) bool {
		st, e := v.host("b")
		return (st == "down" || st == "reconnecting") && e != ""
	})
	st, e := v.host("b")
	t.Logf("with b down: b is %s (%s)", st, e)
	if sa, _ := v.host("a"); sa != "up" {
		t.Fatalf("with b down, a is %s", sa)
	}
	if code, body := w.post("/api/answer", map[string]string{"host": "b", "sessionId": ids["b"], "promptId": prompts["b"], "optionId": options["b"]}); code != http.StatusServiceUnavailable || !strings.Contains(body, "host b") {
		t.Fatalf("answering b while it is down: %d %s, want 503 naming host b", code, body)
	}
	if sameID {
		// The same id on a, up: the answer went to neither.
		_, sa, _, _, _ := sess(w.await("a", func(webHostsView) bool { return true }), "a")
		if sa == "blocked" {
			t.Fatal("a's demo is blocked again")
		}
	}
	v = w.await("b shown down after a failed try", func(v webHostsView) bool {
		st, e := v.host("b")
		return st == "down" && strings.Contains(e, "refused")
	})

	// b comes back: its session is there, waiting on the same prompt.
	b.Up()
	w.await("b up again with its demo blocked on the same prompt", func(v webHostsView) bool {
		st, _ := v.host("b")
		_, sb, pb, _, _ := sess(v, "b")
		return st == "up" && sb == "blocked" && pb == prompts["b"]
	})
	if code, body := w.post("/api/answer", map[string]string{"host": "b", "sessionId": ids["b"], "promptId": prompts["b"], "optionId": options["b"]}); code != 200 {
		t.Fatalf("answering b's demo after it came back: %d %s", code, body)
	}
	w.await("b's demo to finish its turn", func(v webHostsView) bool {
		_, sb, _, _, _ := sess(v, "b")
		return sb == "done" || sb == "idle"
	})
	logText, _ := os.ReadFile(logFile)
	for _, want := range []string{"host=a", "host=b"} {
		if !strings.Contains(string(logText), want) {
			t.Errorf("agentd web's log names no %s:\n%s", want, logText)
		}
	}
	// This machine's demo was never answered from anywhere.
	out, _, _ = d.cli("ls", "--json")
	if !strings.Contains(out, `"state":"idle"`) || strings.Contains(out, `"state":"blocked"`) {
		t.Errorf("this machine's demo: %s; want it idle, untouched", out)
	}
}

// startWebLogged runs agentd web until the test ends, its log in logFile
// (shown when the test fails), and returns its link.
func startWebLogged(t *testing.T, d *daemonEnv, token, logFile string, args ...string) string {
	t.Helper()
	cmd := webCmd(t, d, token, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	lf, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = lf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		lf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			t.Logf("agentd web's log:\n%s", b)
		}
	})
	sc := bufio.NewScanner(stdout)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if l := sc.Text(); strings.HasPrefix(l, "http") && strings.Contains(l, "/login?code=") {
			go func() {
				for sc.Scan() {
				}
			}()
			return l
		}
	}
	t.Fatalf("agentd web %v ended before printing its link:\n%s", args, strings.Join(lines, "\n"))
	return ""
}

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
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
		if code := cmd.ProcessState.ExitCode(); code != exitUsage || err == nil {
			t.Fatalf("agentd web %v: exit %d, want %d", args, code, exitUsage)
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
	if cmd.ProcessState.ExitCode() != exitUsage || !strings.Contains(stderr.String(), "--tls-key") {
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

//go:build unix

// Package webhost is `agentd web`: it hosts the web page's server
// (editors/web) on a listener of its own, connected to the daemon.
package webhost

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/adrg/xdg"
	qrcode "github.com/skip2/go-qrcode"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/cmd/agentd/internal/cli"
	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/editors/web"
	"github.com/agentd/agentd/rpc/client"
	"github.com/agentd/agentd/rpc/config"
	"github.com/agentd/agentd/rpc/hosts"
	"github.com/agentd/agentd/rpc/protocol"
)

// webTokenPath is where agentd web keeps its access token (0600).
func webTokenPath() string {
	if p := os.Getenv("AGENTD_WEB_TOKEN_FILE"); p != "" {
		return p
	}
	return filepath.Join(xdg.ConfigHome, "agentd", "web-token")
}

// Run serves the web page: a client of the daemon like the CLI, so it
// costs the daemon nothing unless it runs. Off loopback it needs TLS or
// the person's word that the network is theirs (docs/web.md).
func Run(args []string, stdout, stderr io.Writer) int {
	fs, socket := cli.Flags("web", stderr)
	listen := fs.String("listen", "127.0.0.1:7433", "address to listen on (host:port); loopback unless TLS or --trusted-network")
	showQR := fs.Bool("qr", false, "also print the link as a QR code")
	rotate := fs.Bool("rotate", false, "make a new access token (every link and cookie made before stops working), then exit")
	allowInput := fs.Bool("allow-input", false, "let the page type into agents, not only answer their prompts")
	certFile := fs.String("tls-cert", "", "TLS certificate (PEM) to serve https")
	keyFile := fs.String("tls-key", "", "TLS private key (PEM)")
	trusted := fs.Bool("trusted-network", false, "allow plain http off loopback: only on a network that is yours alone")
	hosts := fs.String("host", "", "more host names the page answers to, comma-separated (e.g. the name tailscale serve uses)")
	allHosts := fs.Bool("hosts", false, "show the sessions of every host in config.toml's [[hosts]] beside this machine's, each over one ssh connection (docs/hosts.md)")
	if _, err := cli.ParseArgs(fs, args); err != nil {
		return cli.ExitUsage
	}
	tokenPath := webTokenPath()
	if *rotate {
		if err := web.Rotate(tokenPath); err != nil {
			return cli.Fail(stderr, "web", err)
		}
		fmt.Fprintf(stdout, "agentd web: new token in %s; every link and cookie made before no longer works (a running agentd web uses the new one at once)\n", tokenPath)
		return cli.ExitOK
	}
	useTLS := *certFile != "" || *keyFile != ""
	if useTLS && (*certFile == "" || *keyFile == "") {
		fmt.Fprintln(stderr, "agentd web: --tls-cert and --tls-key go together")
		return cli.ExitUsage
	}
	if err := checkListen(*listen, useTLS, *trusted); err != nil {
		fmt.Fprintln(stderr, "agentd web:", err)
		return cli.ExitUsage
	}
	var tlsConf *tls.Config
	if useTLS {
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			return cli.Fail(stderr, "web", fmt.Errorf("--tls-cert/--tls-key: %w", err))
		}
		tlsConf = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	tokens, err := web.NewTokens(tokenPath)
	if err != nil {
		return cli.Fail(stderr, "web", err)
	}
	path, err := daemonlink.SocketPath(*socket)
	if err != nil {
		return cli.Fail(stderr, "web", err)
	}
	var machines []web.Machine
	if *allHosts {
		list, err := daemonlink.ConfiguredHosts()
		if err != nil {
			return cli.Fail(stderr, "web", err)
		}
		machines = webMachines(path, list)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return cli.Fail(stderr, "web", err)
	}
	defer ln.Close()
	addr := ln.Addr().(*net.TCPAddr)
	allowed := allowedHosts(addr, *hosts)
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	srv := web.New(web.Options{
		Tokens: tokens, Dial: webDial(path), Machines: machines, Hosts: allowed, TLS: useTLS, AllowInput: *allowInput,
		Version: buildinfo.Version, Log: logger,
	})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Start(ctx); err != nil && machines != nil {
		fmt.Fprintf(stderr, "agentd web: %v (the page shows each host's state; agentd web connects again on its own)\n", strings.ReplaceAll(err.Error(), "\n", "; "))
	} else if err != nil {
		fmt.Fprintf(stderr, "agentd web: the daemon at %s: %v (the page says so; agentd web connects again every 2 s)\n", path, err)
	}
	// Each printed link carries a one-time code of its own, made afresh at
	// each start: the token stays in its file and never travels in a URL.
	newLink := func(base string) (string, error) { return srv.NewLink(base, web.PrintedLinkLife) }
	hostList := strings.Split(*hosts, ",")
	named := strings.TrimSpace(hostList[0]) != ""
	link, err := newLink(baseURL(useTLS, addr, hostList))
	if err != nil {
		return cli.Fail(stderr, "web", err)
	}
	fmt.Fprintf(stdout, "agentd web: serving on %s\n", ln.Addr())
	var others []string // more addresses another device may use
	if addr.IP.IsUnspecified() {
		// On every address, 127.0.0.1 is for this machine only: the
		// phone's links are the machine's other addresses.
		for _, ip := range reachableIPs(addr.IP.To4() == nil) {
			others = append(others, schemeOf(useTLS)+"://"+net.JoinHostPort(ip.String(), fmt.Sprint(addr.Port)))
		}
		if !named && len(others) > 0 {
			if link, err = newLink(others[0]); err != nil {
				return cli.Fail(stderr, "web", err)
			}
			others = others[1:]
		}
	}
	if named || addr.IP.IsUnspecified() {
		// A --host name on a loopback server is a proxy's (tailscale
		// serve, which speaks https), and on every address the printed
		// link is another device's: this machine's own is printed above.
		local, err := newLink(baseURL(useTLS, addr, nil))
		if err != nil {
			return cli.Fail(stderr, "web", err)
		}
		fmt.Fprintf(stdout, "agentd web: on this machine: %s\n", local)
	}
	for _, o := range others {
		l, err := newLink(o)
		if err != nil {
			return cli.Fail(stderr, "web", err)
		}
		fmt.Fprintf(stdout, "agentd web: from another device: %s\n", l)
	}
	if addr.IP.IsUnspecified() && !named && len(others) == 0 && strings.Contains(link, "://127.0.0.1:") {
		fmt.Fprintln(stdout, "agentd web: found no address of this machine but loopback: other devices cannot reach it")
	}
	fmt.Fprintf(stdout, "agentd web: each link signs in one browser, once, within %.0f hours; a signed-in page makes more (+ device)\n", web.PrintedLinkLife.Hours())
	if *allowInput {
		fmt.Fprintln(stdout, "agentd web: --allow-input: the page can type into agents")
	}
	if *showQR {
		q, err := qrcode.New(link, qrcode.Low)
		if err != nil {
			return cli.Fail(stderr, "web", err)
		}
		fmt.Fprint(stdout, q.ToSmallString(false))
	}
	// The link comes last, under the QR code: a script reading stdout has
	// everything once it has the link.
	fmt.Fprintln(stdout, link)
	hs := &http.Server{Handler: srv, TLSConfig: tlsConf, ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes: 32 << 10, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	if useTLS {
		err = hs.ServeTLS(ln, "", "")
	} else {
		err = hs.Serve(ln)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return cli.Fail(stderr, "web", err)
	}
	return cli.ExitOK
}

// checkListen refuses plain http off loopback unless the person said the
// network is trusted: the token and cookie would cross it in clear text.
func checkListen(addr string, useTLS, trusted bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %v (want host:port, e.g. 127.0.0.1:7433)", addr, err)
	}
	if isLoopback(host) || useTLS || trusted {
		return nil
	}
	return fmt.Errorf("--listen %s is not loopback: the token and cookie would cross the network in clear text. "+
		"Give --tls-cert and --tls-key, or --trusted-network if the network is yours alone; "+
		"for a phone, keep 127.0.0.1 and put `tailscale serve` in front (docs/web.md)", addr)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// allowedHosts are the Host headers the page answers to: the address it
// listens on, loopback's names on its port, every address of this machine
// when it listens on all of them, and the names given with --host.
func allowedHosts(addr *net.TCPAddr, extra string) []string {
	port := fmt.Sprint(addr.Port)
	out := []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port}
	if addr.IP.IsUnspecified() {
		if ifs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range ifs {
				if n, ok := a.(*net.IPNet); ok {
					out = append(out, net.JoinHostPort(n.IP.String(), port))
				}
			}
		}
		if h, err := os.Hostname(); err == nil {
			out = append(out, net.JoinHostPort(h, port))
		}
	} else {
		out = append(out, net.JoinHostPort(addr.IP.String(), port))
	}
	for _, h := range strings.Split(extra, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// baseURL is where the printed links point: the proxy's https name for
// a --host name on loopback, else the address listened on (127.0.0.1 for
// all addresses, or the first --host name).
func baseURL(useTLS bool, addr *net.TCPAddr, hosts []string) string {
	host := net.JoinHostPort(addr.IP.String(), fmt.Sprint(addr.Port))
	first := ""
	if len(hosts) > 0 {
		first = strings.TrimSpace(hosts[0])
	}
	if isLoopback(addr.IP.String()) && first != "" {
		return "https://" + first
	}
	if addr.IP.IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", fmt.Sprint(addr.Port))
		if h := first; h != "" {
			host = h
			if !strings.Contains(h, ":") {
				host = net.JoinHostPort(h, fmt.Sprint(addr.Port))
			}
		}
	}
	return schemeOf(useTLS) + "://" + host
}

func schemeOf(useTLS bool) string {
	if useTLS {
		return "https"
	}
	return "http"
}

// reachableIPs are this machine's addresses another device can open: of
// interfaces that are up and not loopback, IPv4 first, then (when
// listening on IPv6 too) global IPv6; never link-local ones, which need a
// zone a phone's browser cannot take.
func reachableIPs(withV6 bool) []net.IP {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var v4, v6 []net.IP
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() || n.IP.IsUnspecified() || n.IP.IsMulticast() {
				continue
			}
			if n.IP.To4() != nil {
				v4 = append(v4, n.IP.To4())
			} else if withV6 {
				v6 = append(v6, n.IP)
			}
		}
	}
	return append(v4, v6...)
}

// webMachines are the hosts of agentd web --hosts: this machine's daemon
// through its socket, the others each through one long-lived ssh
// connection (`agentd --stdio --no-start` there: the page never starts a
// daemon anywhere).
func webMachines(socket string, list []config.Host) []web.Machine {
	var out []web.Machine
	for _, h := range list {
		if h.Local {
			dial := webDial(socket)
			out = append(out, web.Machine{Name: h.Name, Dial: func(ctx context.Context, onNote func(client.Notification)) (*client.Client, error) {
				c, err := dial(ctx, onNote)
				if err != nil && daemonlink.CanStart(err) {
					err = fmt.Errorf("%w (%v)", web.ErrNoDaemon, err)
				}
				return c, err
			}})
			continue
		}
		out = append(out, web.Machine{Name: h.Name, Remote: true, Dial: func(ctx context.Context, onNote func(client.Notification)) (*client.Client, error) {
			ctx, cancel := context.WithTimeout(ctx, daemonlink.DialTimeout)
			defer cancel()
			// Background: the page watches; it keeps no idle daemon there
			// running.
			r, err := hosts.Dial(ctx, h, false, protocol.ClientInfo{Name: "agentd-web", Version: buildinfo.Version, Background: true}, onNote)
			if errors.Is(err, hosts.ErrNoDaemon) {
				return nil, web.ErrNoDaemon
			}
			if err != nil {
				return nil, err
			}
			return r.Client, nil
		}})
	}
	return out
}

// webDial connects the page server to the daemon as the CLI does, never
// starting one: the page says when none runs.
func webDial(socket string) web.DialFunc {
	return func(ctx context.Context, onNote func(client.Notification)) (*client.Client, error) {
		nc, err := daemonlink.Dial(socket)
		if err != nil {
			return nil, err
		}
		cwd, _ := os.Getwd()
		hello := protocol.HelloParams{Version: buildinfo.Version, ProtocolVersion: protocol.ProtocolVersion, Pid: os.Getpid(), Cwd: cwd}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		c, err := client.NewClient(cctx, nc, hello, onNote)
		if err != nil {
			_ = nc.Close()
			return nil, err
		}
		var init protocol.InitializeResult
		if err := c.Call(cctx, protocol.MethodInitialize, protocol.InitializeParams{ClientInfo: &protocol.ClientInfo{Name: "agentd-web", Version: buildinfo.Version}}, &init); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
}

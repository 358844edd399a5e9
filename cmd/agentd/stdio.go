//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/adrg/xdg"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/rpc/config"
	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// host is what a server needs, built from the flags: the log, the rules,
// the keeper and the server itself.
type host struct {
	log    *slog.Logger
	srv    *rpc.Server
	keeper *keeperPipe  // nil: none could start
	files  *daemonFiles // the daemon's socket, lock and keeper, once it listens
	close  func()
}

// newHost builds a server. socket is the daemon's socket ("" in private
// mode); report sockets go beside it.
//
// keeper is the keeper a daemon before this code started (a handover);
// nil starts one.
func newHost(f *daemonlink.ServerFlags, private bool, socket string, stderr io.Writer, keeper *keeperPipe) (*host, error) {
	var stopProfile func()
	if f.CPUProfile != "" {
		pf, err := os.Create(f.CPUProfile)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			return nil, err
		}
		stopProfile = func() { pprof.StopCPUProfile(); _ = pf.Close() }
	}
	log, closeLog := daemonlink.OpenLog(f.LogPath, f.Verbose, f.Debug, stderr)
	rules, warnings := loadRules()
	for _, w := range warnings {
		log.Warn("manifest problem", "err", w)
		if !f.Verbose {
			fmt.Fprintf(stderr, "agentd: warning: %v\n", w)
		}
	}
	conf, err := config.Load(config.Path(xdg.ConfigHome))
	if err != nil {
		log.Warn("config problem: no notify commands run and no other host is followed", "err", err)
		if !f.Verbose {
			fmt.Fprintf(stderr, "agentd: warning: %v (no notify commands run and no other host is followed)\n", err)
		}
	}
	self, _ := os.Executable()
	if keeper == nil {
		var err error
		if keeper, err = startKeeper(self); err != nil {
			log.Warn("no keeper: agents would outlive an agentd that is killed", "err", err)
		}
	}
	reportDir := daemonlink.RuntimeDir()
	if socket != "" {
		reportDir = filepath.Dir(socket)
	}
	if err := daemonlink.PrivateDir(reportDir); err != nil {
		log.Warn("no report socket: hooks and agentd signal will not reach agentd", "err", err)
		reportDir = ""
	}
	opts := sessions.Options{Rules: rules, ReportDir: reportDir, Self: self, Log: log,
		PermissionTimeout: f.PermTimeout, KeepExited: f.KeepExited, DetectPoll: f.DetectPoll, DaemonSocket: socket,
		ScreensDir: daemonlink.ScreensDir(), Version: buildinfo.Version}
	if keeper != nil { // a nil *keeperPipe must not become a non-nil io.Writer
		opts.Keeper = keeper
	}
	cfg := rpc.Config{Version: buildinfo.Version, Log: log, Cooldown: f.Cooldown, Private: private, Socket: socket, Notify: conf.Notify, Desktop: conf.Desktop}
	h := &host{log: log, keeper: keeper}
	if !private {
		cfg.Hosts = conf.Hosts
		cfg.Upgrade = func(p protocol.UpgradeParams) error {
			if h.files == nil {
				return errors.New("this daemon is still starting")
			}
			return upgradeTo(h.srv, h.files, h.log, p)
		}
	}
	h.srv = rpc.NewServer(opts, cfg)
	h.close = func() {
		closeLog()
		if stopProfile != nil {
			stopProfile()
		}
	}
	return h, nil
}

// cmdStdio is what editors start. By default it is a thin forwarder to the
// per-user daemon (started when none runs), so agents outlive the editor;
// with --private it serves in-process and its sessions end with stdin.
// stdout carries only protocol; logs go to a file under the XDG state dir
// (and to stderr with --verbose).
func cmdStdio(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentd --stdio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f daemonlink.ServerFlags
	f.Register(fs)
	private := fs.Bool("private", false, "serve in this process: sessions end when stdin closes (no daemon)")
	socket := fs.String("socket", "", "the daemon's socket (default $AGENTD_SOCKET, else $XDG_RUNTIME_DIR/agentd/agentd.sock)")
	idle := fs.Duration("idle-timeout", 10*time.Minute, "for a daemon this starts: exit after this long with no session and no client")
	noStart := fs.Bool("no-start", false, "connect only to a daemon that runs: start none (initialize is answered with -32042 when none runs)")
	host := fs.String("host", "", "forward to the agentd of this host of config.toml's [[hosts]], over ssh (docs/hosts.md)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *host != "" {
		if *private {
			fmt.Fprintln(stderr, "agentd --stdio: --host and --private: a private agentd is this process, on this machine")
			return 2
		}
		return forwardHost(*host, !*noStart, stdin, stdout, stderr)
	}
	if !*private {
		return forward(forwardOptions{socket: *socket, flags: &f, idle: *idle, noStart: *noStart}, stdin, stdout, stderr)
	}
	h, err := newHost(&f, true, "", stderr, nil)
	if err != nil {
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return 2
	}
	defer h.close()
	h.log.Info("serving on stdio (private)", "version", buildinfo.Version, "pid", os.Getpid())
	if err := h.srv.Serve(context.Background(), stdin, stdout); err != nil {
		h.log.Error("serve", "err", err)
		return 1
	}
	return 0
}

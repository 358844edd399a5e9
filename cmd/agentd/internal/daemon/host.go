//go:build unix

package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/adrg/xdg"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/cmd/agentd/internal/keeper"
	"github.com/agentd/agentd/cmd/agentd/internal/rules"
	"github.com/agentd/agentd/cmd/agentd/internal/upgrade/handover"
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
	keeper *keeper.Pipe          // nil: none could start
	files  *handover.DaemonFiles // the daemon's socket, lock and keeper, once it listens
	close  func()
}

// newHost builds a server. socket is the daemon's socket ("" in private
// mode); report sockets go beside it.
//
// kp is the keeper a daemon before this code started (a handover); nil
// starts one.
func newHost(f *daemonlink.ServerFlags, private bool, socket string, stderr io.Writer, kp *keeper.Pipe) (*host, error) {
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
	set, warnings := rules.Load()
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
	if kp == nil {
		var err error
		if kp, err = keeper.Start(self); err != nil {
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
	opts := sessions.Options{Rules: set, ReportDir: reportDir, Self: self, Log: log,
		PermissionTimeout: f.PermTimeout, KeepExited: f.KeepExited, DetectPoll: f.DetectPoll, DaemonSocket: socket,
		ScreensDir: daemonlink.ScreensDir(), Version: buildinfo.Version}
	if kp != nil { // a nil *keeper.Pipe must not become a non-nil io.Writer
		opts.Keeper = kp
	}
	cfg := rpc.Config{Version: buildinfo.Version, Log: log, Cooldown: f.Cooldown, Private: private, Socket: socket, Notify: conf.Notify, Desktop: conf.Desktop}
	h := &host{log: log, keeper: kp}
	if !private {
		cfg.Hosts = conf.Hosts
		cfg.Upgrade = func(p protocol.UpgradeParams) error {
			if h.files == nil {
				return errors.New("this daemon is still starting")
			}
			return handover.Upgrade(h.srv, h.files, h.log, p)
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

// Private is `agentd --stdio --private`: a server in this process for
// the one client on stdin and stdout, whose sessions end with it.
func Private(f *daemonlink.ServerFlags, stdin io.Reader, stdout, stderr io.Writer) int {
	h, err := newHost(f, true, "", stderr, nil)
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

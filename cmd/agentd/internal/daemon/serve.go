//go:build unix

// Package daemon hosts the sessions: the per-user daemon (`agentd
// serve`, serve.go), which owns every session while editors (through the
// forwarder `agentd --stdio`), Neovim and the CLI are its clients, and the
// private in-process server of `agentd --stdio --private` (host.go). One
// daemon runs per socket: it holds the lock beside it for its whole life
// (daemonlink.Lock), so a second one refuses to start and a dead one's
// socket can be replaced without asking anybody.
package daemon

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/cmd/agentd/internal/keeper"
	"github.com/agentd/agentd/cmd/agentd/internal/upgrade/handover"
	"github.com/agentd/agentd/rpc/protocol"
)

// Serve runs the daemon in the foreground: `agentd serve`. A forwarder
// starts it detached, with --ready-fd to learn when it listens.
func Serve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentd serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f daemonlink.ServerFlags
	f.Register(fs)
	socket := fs.String("socket", "", "listen here (default $AGENTD_SOCKET, else $XDG_RUNTIME_DIR/agentd/agentd.sock)")
	idle := fs.Duration("idle-timeout", 10*time.Minute, "exit after this long with no session and no client (0: never)")
	readyFD := fs.Int("ready-fd", 0, "write \"ready\" (or the error) to this file descriptor once listening (what a forwarder that starts the daemon reads)")
	// The handover (package handover): set by a daemon for the code it becomes.
	resumeFD := fs.Int("resume-fd", -1, "internal (agentd upgrade): take over the sessions of the daemon this process was, from this handover file")
	handoverErr := fs.String("handover-error", "", "internal (agentd upgrade): the new code could not take over, and why")
	handoverCheck := fs.Bool("handover-check", false, "internal (agentd upgrade): read a handover on stdin, print ok if this binary can take it over")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *handoverCheck {
		return handover.Check(stdin, stdout, stderr)
	}
	var ready io.WriteCloser = nopWriteCloser{io.Discard}
	if *readyFD > 0 {
		ready = os.NewFile(uintptr(*readyFD), "ready")
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "agentd serve: %v\n", err)
		fmt.Fprintf(ready, "error %v\n", err)
		_ = ready.Close()
		return code
	}
	path, err := daemonlink.SocketPath(*socket)
	if err != nil {
		return fail(2, err)
	}
	// The flags the next code gets, should this daemon hand over.
	files := &handover.DaemonFiles{Args: append([]string{"--socket", path, "--idle-timeout", idle.String()}, f.DaemonArgs()...)}
	if f.Verbose {
		files.Args = append(files.Args, "--verbose")
	}
	if *resumeFD >= 0 {
		return resumeServe(&f, path, *idle, *resumeFD, *handoverErr, files, stderr)
	}
	if err := daemonlink.PrivateDir(filepath.Dir(path)); err != nil {
		return fail(1, err)
	}
	files.Lock, err = daemonlink.Lock(path)
	if err != nil {
		return fail(1, err)
	}
	defer runtime.KeepAlive(files.Lock) // let go of by the kernel as the process ends
	files.Ln, err = Listen(path)
	if err != nil {
		return fail(1, fmt.Errorf("listen on %s: %w", path, err))
	}
	defer os.Remove(path) // ours: the lock is still held
	h, err := newHost(&f, false, path, stderr, nil)
	if err != nil {
		files.Ln.Close()
		return fail(2, err)
	}
	defer h.close()
	files.Keeper = h.keeper
	h.files = files
	h.log.Info("daemon serving", "socket", path, "version", buildinfo.Version, "pid", os.Getpid(), "idle_timeout", idle.String())
	fmt.Fprintf(ready, "ready %d\n", os.Getpid())
	_ = ready.Close()
	return serveDaemon(h, files.Ln, *idle)
}

// resumeServe is the daemon after a handover: the same process, now this
// code, with the socket, its lock, the keeper and every PTY still open.
func resumeServe(f *daemonlink.ServerFlags, path string, idle time.Duration, fd int, handoverErr string, files *handover.DaemonFiles, stderr io.Writer) int {
	ho, hf, err := handover.Read(fd)
	if ho == nil {
		// Nothing names the descriptors: there is nothing to hand back.
		fmt.Fprintf(stderr, "agentd serve: %v\n", err)
		return 1
	}
	files.Lock = os.NewFile(uintptr(ho.Lock), "lock")
	syscall.CloseOnExec(ho.Lock)
	defer runtime.KeepAlive(files.Lock)
	h, herr := newHost(f, false, path, stderr, keeper.Adopt(ho.Keeper, ho.KeeperPid))
	if err == nil {
		err = herr
	}
	if err == nil {
		files.Ln, files.Handed, err = handover.Listener(ho.Listener)
	}
	rec := protocol.UpgradeRecord{From: ho.FromVersion, To: ho.ToVersion, At: ho.At, Error: handoverErr,
		Settling: ho.WatchPid > 0 && ho.WatchPid != os.Getpid()}
	if err == nil {
		err = handover.Adopt(h.srv, ho.Server, rec)
	}
	if err != nil {
		log := slog.New(slog.NewTextHandler(stderr, nil))
		if h != nil {
			log = h.log
		}
		if handoverErr != "" {
			// The code handed back to could not take over either.
			log.Error("cannot take the sessions back; the keeper ends them as this process exits", "err", err, "handover_error", handoverErr)
			return 1
		}
		err = handover.HandBack(ho, hf, err, log)
		log.Error("cannot hand the sessions back; the keeper ends them as this process exits", "err", err)
		return 1
	}
	hf.Close()
	defer os.Remove(path)
	defer h.close()
	files.Keeper = h.keeper
	h.files = files
	if handoverErr != "" {
		h.log.Error("the upgrade failed; this code took its sessions back", "to", ho.ToVersion, "err", handoverErr)
	}
	h.log.Info("daemon serving after a handover", "socket", path, "version", buildinfo.Version, "from", ho.FromVersion, "pid", os.Getpid(),
		"sessions", len(ho.Server.Sessions.Sessions), "since_handover", sinceStamp(ho.At))
	standDown := handover.Serving(ho, func() {
		h.srv.Settled()
		h.log.Info("the code before stopped watching: this code keeps the sessions", "watchdog", ho.WatchPid)
	})
	defer standDown() // a daemon that ends as asked is not one that died
	return serveDaemon(h, files.Ln, idle)
}

func sinceStamp(at string) string {
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return ""
	}
	return time.Since(t).String()
}

// serveDaemon serves until the daemon ends.
func serveDaemon(h *host, ln *net.UnixListener, idle time.Duration) int {
	// A person's kill (SIGTERM, or Ctrl-C on a daemon run by hand) ends the
	// daemon and its sessions, as agentd stop --force does. A hang-up does
	// not: the daemon has no terminal of its own to lose. (Caught, not
	// ignored: an ignored signal stays ignored in every agent started.)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for sig := range sigs {
			if sig == syscall.SIGHUP {
				h.log.Info("signal: hang-up ignored; the daemon has no terminal")
				continue
			}
			h.log.Info("signal: ending the daemon and its sessions", "signal", sig.String())
			h.srv.Stop()
		}
	}()
	if err := h.srv.Run(context.Background(), ln, idle); err != nil {
		h.log.Error("serve", "err", err)
		return 1
	}
	h.log.Info("daemon ended")
	return 0
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

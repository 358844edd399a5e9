package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/adrg/xdg"

	"github.com/agentd/agentd/rpc"
	"github.com/agentd/agentd/sessions"
)

// cmdStdio serves the editor protocol on stdin/stdout. stdout carries only
// protocol; logs go to a file under the XDG state dir (and to stderr with
// --verbose).
func cmdStdio(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("agentd --stdio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("verbose", false, "also log to stderr")
	debug := fs.Bool("debug", false, "also log what ACP agents print on stderr and the lines agentd could not read from them (may hold prompt or screen text)")
	cooldown := fs.Duration("cooldown", 30*time.Second, "attention is raised at most once per session and state in this window")
	logPath := fs.String("log", "", "log file (default $XDG_STATE_HOME/agentd/agentd.log)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (pprof) to this file until agentd exits")
	permTimeout := fs.Duration("permission-timeout", 30*time.Minute, "an ACP permission nobody answers in this time is answered with the agent's reject option")
	// For benchmarks only (cmd/agentd-bench): classify every session on
	// this ticker instead of when its screen changes.
	detectPoll := fs.Duration("detect-poll", 0, "benchmarks only: classify every session on this ticker instead of on change")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "agentd: %v\n", err)
			return 2
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "agentd: %v\n", err)
			return 2
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
	log, closeLog := openLog(*logPath, *verbose, *debug, stderr)
	defer closeLog()
	rules, warnings := loadRules()
	for _, w := range warnings {
		log.Warn("manifest problem", "err", w)
		if !*verbose {
			fmt.Fprintf(stderr, "agentd: warning: %v\n", w)
		}
	}
	self, _ := os.Executable()
	keeper, err := startKeeper(self)
	if err != nil {
		log.Warn("no keeper: agents would outlive an agentd that is killed", "err", err)
	}
	srv := rpc.NewServer(sessions.Options{Rules: rules, Cooldown: *cooldown, ReportDir: reportDir(), Self: self, Log: log, Keeper: keeper, PermissionTimeout: *permTimeout, DetectPoll: *detectPoll}, version, log)
	log.Info("serving on stdio", "version", version, "pid", os.Getpid())
	if err := srv.Serve(context.Background(), stdin, stdout); err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	return 0
}

// reportDir is where the report socket goes: $XDG_RUNTIME_DIR/agentd, or a
// private folder under the temp dir where there is no runtime dir.
func reportDir() string {
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		return filepath.Join(dir, "agentd")
	}
	if st, err := os.Stat(xdg.RuntimeDir); err == nil && st.IsDir() {
		return filepath.Join(xdg.RuntimeDir, "agentd")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("agentd-%d", os.Getuid()))
}

// openLog opens agentd's log. Without debug it holds what agentd did, never
// screen text, prompt text, input or environment values.
func openLog(path string, verbose, debug bool, stderr io.Writer) (*slog.Logger, func()) {
	var writers []io.Writer
	closeFn := func() {}
	if path == "" {
		if p, err := xdg.StateFile("agentd/agentd.log"); err == nil {
			path = p
		}
	}
	if path != "" {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
			writers = append(writers, f)
			closeFn = func() { _ = f.Close() }
		}
	}
	if verbose {
		writers = append(writers, stderr)
	}
	if len(writers) == 0 {
		return slog.New(slog.NewTextHandler(io.Discard, nil)), closeFn
	}
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(io.MultiWriter(writers...), &slog.HandlerOptions{Level: level})), closeFn
}

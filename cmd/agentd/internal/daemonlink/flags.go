//go:build unix

package daemonlink

import (
	"flag"
	"path/filepath"
	"time"
)

// ServerFlags are the flags of whatever hosts sessions: the daemon
// (`agentd serve`) and the private in-process mode (`--stdio --private`).
// The forwarder takes them too and hands them to a daemon it starts.
type ServerFlags struct {
	Verbose     bool
	Debug       bool
	Cooldown    time.Duration
	LogPath     string
	CPUProfile  string
	PermTimeout time.Duration
	KeepExited  time.Duration
	DetectPoll  time.Duration
}

// Register adds the flags to fs.
func (f *ServerFlags) Register(fs *flag.FlagSet) {
	fs.BoolVar(&f.Verbose, "verbose", false, "also log to stderr")
	fs.BoolVar(&f.Debug, "debug", false, "also log what ACP agents print on stderr and the lines agentd could not read from them (may hold prompt or screen text)")
	fs.DurationVar(&f.Cooldown, "cooldown", 30*time.Second, "attention is raised at most once per session and state in this window, for each client")
	fs.StringVar(&f.LogPath, "log", "", "log file (default $XDG_STATE_HOME/agentd/agentd.log)")
	fs.StringVar(&f.CPUProfile, "cpuprofile", "", "write a CPU profile (pprof) to this file until agentd exits")
	fs.DurationVar(&f.PermTimeout, "permission-timeout", 30*time.Minute, "an ACP permission nobody answers in this time is answered with the agent's reject option")
	fs.DurationVar(&f.KeepExited, "keep-exited", time.Hour, "an exited session stays listed, with its last screen, this long")
	// For benchmarks only (cmd/agentd-bench): classify every session on
	// this ticker instead of when its screen changes.
	fs.DurationVar(&f.DetectPoll, "detect-poll", 0, "benchmarks only: classify every session on this ticker instead of on change")
}

// DefaultServerFlags are the flags' defaults: what a daemon the CLI starts
// (agentd run) runs with.
func DefaultServerFlags() *ServerFlags {
	var f ServerFlags
	f.Register(flag.NewFlagSet("defaults", flag.ContinueOnError))
	return &f
}

// DaemonArgs are the flags a forwarder passes to the daemon it starts.
func (f *ServerFlags) DaemonArgs() []string {
	args := []string{"--cooldown", f.Cooldown.String(), "--permission-timeout", f.PermTimeout.String(), "--keep-exited", f.KeepExited.String()}
	if f.Debug {
		args = append(args, "--debug")
	}
	if f.LogPath != "" {
		if abs, err := filepath.Abs(f.LogPath); err == nil {
			args = append(args, "--log", abs)
		}
	}
	return args
}

func (f *ServerFlags) daemonLogPath() string {
	if f.LogPath != "" {
		if abs, err := filepath.Abs(f.LogPath); err == nil {
			return abs
		}
	}
	return DefaultLogPath()
}

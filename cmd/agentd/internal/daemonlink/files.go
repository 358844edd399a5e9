//go:build unix

package daemonlink

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/adrg/xdg"
)

// OpenLog opens agentd's log. Without debug it holds what agentd did, never
// screen text, prompt text, input or environment values.
func OpenLog(path string, verbose, debug bool, stderr io.Writer) (*slog.Logger, func()) {
	var writers []io.Writer
	closeFn := func() {}
	if path == "" {
		path = DefaultLogPath()
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

// ScreensDir is where sessions keep the screens their agents' reports
// disagree with: $XDG_STATE_HOME/agentd/screens (agentd doctor lists them).
func ScreensDir() string { return filepath.Join(xdg.StateHome, "agentd", "screens") }

// DefaultLogPath is $XDG_STATE_HOME/agentd/agentd.log (its folder made), or
// "" when there is no state folder.
func DefaultLogPath() string {
	p, err := xdg.StateFile("agentd/agentd.log")
	if err != nil {
		return ""
	}
	return p
}

// Package program finds the programs agentd starts and names how they
// ended, the same way for a PTY session (sessions) and an ACP agent (acp).
package program

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LookPath resolves name the way the child will see it: a name with a
// slash relative to dir, anything else on the PATH of env (agentd's own
// PATH when env has none). Empty and relative PATH entries are skipped:
// a program found in whatever folder the agent runs in is not one the
// person chose.
func LookPath(name, dir string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("program %q %w", name, err)
		}
		return p, nil
	}
	path, ok := Getenv(env, "PATH")
	if !ok {
		path = os.Getenv("PATH")
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("program %q not found on PATH: %w", name, exec.ErrNotFound)
}

func executable(p string) error {
	st, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("not found")
	case err != nil:
		return err
	case st.IsDir() || st.Mode()&0o111 == 0:
		return errors.New("is not executable")
	}
	return nil
}

// Getenv is key's value in env ("K=V" entries, the last one winning, as
// for the child).
func Getenv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// signalNames are the signals the protocol names (how a session ended).
var signalNames = map[string]syscall.Signal{
	"SIGHUP": syscall.SIGHUP, "SIGINT": syscall.SIGINT, "SIGQUIT": syscall.SIGQUIT,
	"SIGKILL": syscall.SIGKILL, "SIGTERM": syscall.SIGTERM, "SIGUSR1": syscall.SIGUSR1,
	"SIGUSR2": syscall.SIGUSR2, "SIGCONT": syscall.SIGCONT, "SIGSTOP": syscall.SIGSTOP,
	"SIGWINCH": syscall.SIGWINCH, "SIGSEGV": syscall.SIGSEGV, "SIGABRT": syscall.SIGABRT,
	"SIGPIPE": syscall.SIGPIPE, "SIGBUS": syscall.SIGBUS, "SIGALRM": syscall.SIGALRM,
}

// SignalName names sig as the protocol does: "SIGTERM", or "SIG" and its
// number for one without a name here.
func SignalName(sig syscall.Signal) string {
	for name, s := range signalNames {
		if s == sig {
			return name
		}
	}
	return "SIG" + strconv.Itoa(int(sig))
}

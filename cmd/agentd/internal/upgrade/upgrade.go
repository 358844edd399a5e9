//go:build unix

// Package upgrade is the client's side of a handover: agentd upgrade
// asks the daemon for one, and the CLI and the forwarder ask on their
// own when they find the daemon older than themselves. The daemon's side
// is package handover below; this one carries none of the daemon's code.
package upgrade

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/rpc/protocol"
)

// EnvAuto=0 keeps the CLI and the forwarder from upgrading an older
// daemon on their own.
const EnvAuto = "AGENTD_AUTO_UPGRADE"

// Binary is the binary to hand over to: the flag, else this one.
func Binary(flagValue string) (string, error) {
	p := flagValue
	if p == "" {
		self, err := os.Executable()
		if err != nil {
			return "", err
		}
		p = self
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: no such file (--binary names the agentd to hand the sessions to)", abs)
	}
	return real, err
}

// Outcome is a handover that happened.
type Outcome struct {
	before, after protocol.Daemon
	sessions      int
	took          time.Duration
}

func (o Outcome) String() string {
	s := fmt.Sprintf("agentd daemon (pid %d) upgraded from %s to %s in %d ms (its sessions paused for %d ms); its %d session(s) run on",
		o.after.Pid, o.before.Version, o.after.Version, o.took.Milliseconds(), o.after.LastUpgrade.PausedMs, o.sessions)
	if w := orderWarning(o.before.Version, o.after.Version); w != "" {
		s += "\nwarning: " + w
	}
	return s
}

// orderWarning says when a handover from one version to another went
// ahead only because a person asked for it: the two cannot be ordered
// (builds of commits with no release tag), so the new code may be older.
func orderWarning(from, to string) string {
	switch {
	case from == to:
		return "the daemon ran this very version already; the sessions were handed to the same version again"
	case protocol.CompareVersions(from, to) == 0:
		return fmt.Sprintf("%s and %s cannot be ordered (builds without a release tag), so the new code may be the older; a daemon only moves between them when asked, by agentd upgrade", from, to)
	}
	return ""
}

// answerLimit bounds the wait for the daemon's answer to an upgrade: it
// runs the new binary twice (each within handover's checkLimit) before it
// hands over or says why not.
const answerLimit = 2 * time.Minute

// Request asks the daemon at socket to hand over to binary, and
// waits until it answers again as the new code. Success is what the
// daemon says after: a new last upgrade, without an error, to the version
// it now runs; anything else is an error saying what happened.
func Request(socket, binary string, auto bool) (Outcome, error) {
	start := time.Now()
	c, err := daemonlink.Hello(socket)
	if daemonlink.CanStart(err) {
		return Outcome{}, fmt.Errorf("no daemon runs at %s, so there is nothing to upgrade: the next agentd command starts one of its own build", socket)
	} else if err != nil {
		return Outcome{}, err
	}
	before := c.Hello.Daemon
	var list protocol.ListResult
	_ = c.Call(context.Background(), protocol.MethodList, nil, &list)
	ctx, cancel := context.WithTimeout(context.Background(), answerLimit)
	err = c.Call(ctx, protocol.MethodUpgrade, protocol.UpgradeParams{Binary: binary, Auto: auto}, nil)
	cancel()
	c.Close()
	var rpcErr *jsonrpc2.Error
	switch {
	case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc2.CodeMethodNotFound:
		return Outcome{}, fmt.Errorf("the daemon (pid %d) runs %s, too old to hand over its sessions: `agentd stop` it (its sessions end; `agentd ls` lists them first) and the next agentd command starts this one", before.Pid, before.Version)
	case errors.As(err, &rpcErr):
		return Outcome{}, errors.New(rpcErr.Message)
	case err == nil:
		return Outcome{}, errors.New("the daemon answered the upgrade without handing over")
	case errors.Is(err, context.DeadlineExceeded):
		return Outcome{}, fmt.Errorf("the daemon (pid %d, %s) gave no answer to the upgrade within %s; `agentd version --daemon` shows what it runs", before.Pid, before.Version, answerLimit)
	}
	// The connection closed: the daemon's process is becoming the new code.
	// The socket stays open across it, so the next hello waits for it.
	var after protocol.Daemon
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c, err := daemonlink.Hello(socket)
		if err == nil {
			after = c.Hello.Daemon
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			return Outcome{}, fmt.Errorf("the daemon did not answer after the handover: %w", err)
		}
		time.Sleep(20 * time.Millisecond) // a connection the old code took as it went
	}
	// The new code serves, and the code before watches it a moment more,
	// taking the sessions back should it die (handover/watch.go): the
	// upgrade is not over until that is.
	for after.Pid == before.Pid && after.LastUpgrade != nil && after.LastUpgrade.Settling && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		c, err := daemonlink.Hello(socket)
		if daemonlink.CanStart(err) {
			// The socket is gone: stopped, not died (a watchdog keeps the
			// socket of a daemon that died).
			return Outcome{}, fmt.Errorf("the daemon (pid %d) took over as %s, then ended (agentd stop?); no daemon runs now", after.Pid, after.Version)
		} else if err == nil {
			after = c.Hello.Daemon
			c.Close()
		}
	}
	out := Outcome{before: before, after: after, sessions: len(list.Sessions), took: time.Since(start)}
	last := after.LastUpgrade
	switch {
	case after.Pid != before.Pid && after.Instance == before.Instance && last != nil && last.Error != "":
		return out, fmt.Errorf("the upgrade failed: %s", last.Error)
	case after.Pid != before.Pid:
		return out, fmt.Errorf("a different daemon (pid %d, %s) answers now; the one upgraded was pid %d", after.Pid, after.Version, before.Pid)
	case last != nil && last.Settling:
		return out, fmt.Errorf("the daemon (pid %d) runs %s, but the code before it still watched it after %s", after.Pid, after.Version, answerLimit)
	case last == nil || (before.LastUpgrade != nil && *last == *before.LastUpgrade):
		return out, fmt.Errorf("the daemon (pid %d) closed the connection but did not hand over: it still runs %s", after.Pid, after.Version)
	case last.Error != "":
		return out, fmt.Errorf("the new code could not take over, and handed the sessions back to %s (pid %d): %s", after.Version, after.Pid, last.Error)
	case after.Version != last.To:
		return out, fmt.Errorf("the daemon (pid %d) runs %s, not %s, which it handed over to", after.Pid, after.Version, last.To)
	}
	return out, nil
}

// Wanted says whether a client of this build should ask the daemon
// d to hand over to it: d is older by version, speaks the same protocol,
// and nobody turned it off.
func Wanted(d protocol.Daemon) bool {
	return os.Getenv(EnvAuto) != "0" && !d.Private && d.ProtocolVersion == protocol.ProtocolVersion &&
		protocol.CompareVersions(buildinfo.Version, d.Version) > 0
}

// Auto upgrades the daemon at socket to this binary, telling
// stderr what happened. A refusal is not an error: the older daemon
// serves on.
func Auto(socket string, d protocol.Daemon, stderr io.Writer) {
	self, err := Binary("")
	if err == nil {
		var out Outcome
		if out, err = Request(socket, self, true); err == nil {
			fmt.Fprintf(stderr, "agentd: %s\n", out)
			return
		}
	}
	fmt.Fprintf(stderr, "agentd: warning: the daemon (pid %d) runs %s, older than this %s, and was not upgraded: %v\n", d.Pid, d.Version, buildinfo.Version, err)
}

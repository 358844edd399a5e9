//go:build unix

package main

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

// The client's side of a handover (handover.go has the daemon's): agentd
// upgrade asks for one; the CLI and the forwarder ask on their own when
// they find the daemon older than themselves.

// envAutoUpgrade=0 keeps the CLI and the forwarder from upgrading an older
// daemon on their own.
const envAutoUpgrade = "AGENTD_AUTO_UPGRADE"

func cmdUpgrade(args []string, stdout, stderr io.Writer) int {
	fs, socket := newFlags("upgrade", stderr)
	binary := fs.String("binary", "", "the agentd to hand the sessions to (default: this one)")
	if _, err := parseArgs(fs, args); err != nil {
		return exitUsage
	}
	path, err := daemonlink.SocketPath(*socket)
	if err != nil {
		return fail(stderr, "upgrade", err)
	}
	target, err := upgradeBinary(*binary)
	if err != nil {
		return fail(stderr, "upgrade", err)
	}
	out, err := requestUpgrade(path, target, false)
	if err != nil {
		return fail(stderr, "upgrade", err)
	}
	fmt.Fprintln(stdout, out)
	return exitOK
}

// upgradeBinary is the binary to hand over to: the flag, else this one.
func upgradeBinary(flagValue string) (string, error) {
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

// upgradeOutcome is a handover that happened.
type upgradeOutcome struct {
	before, after protocol.Daemon
	sessions      int
	took          time.Duration
}

func (o upgradeOutcome) String() string {
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

// upgradeAnswerLimit bounds the wait for the daemon's answer to an
// upgrade: it runs the new binary twice (each within checkLimit) before it
// hands over or says why not.
const upgradeAnswerLimit = 2 * time.Minute

// requestUpgrade asks the daemon at socket to hand over to binary, and
// waits until it answers again as the new code. Success is what the
// daemon says after: a new last upgrade, without an error, to the version
// it now runs; anything else is an error saying what happened.
func requestUpgrade(socket, binary string, auto bool) (upgradeOutcome, error) {
	start := time.Now()
	c, err := daemonlink.Hello(socket)
	if daemonlink.CanStart(err) {
		return upgradeOutcome{}, fmt.Errorf("no daemon runs at %s, so there is nothing to upgrade: the next agentd command starts one of its own build", socket)
	} else if err != nil {
		return upgradeOutcome{}, err
	}
	before := c.Hello.Daemon
	var list protocol.ListResult
	_ = c.Call(context.Background(), protocol.MethodList, nil, &list)
	ctx, cancel := context.WithTimeout(context.Background(), upgradeAnswerLimit)
	err = c.Call(ctx, protocol.MethodUpgrade, protocol.UpgradeParams{Binary: binary, Auto: auto}, nil)
	cancel()
	c.Close()
	var rpcErr *jsonrpc2.Error
	switch {
	case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc2.CodeMethodNotFound:
		return upgradeOutcome{}, fmt.Errorf("the daemon (pid %d) runs %s, too old to hand over its sessions: `agentd stop` it (its sessions end; `agentd ls` lists them first) and the next agentd command starts this one", before.Pid, before.Version)
	case errors.As(err, &rpcErr):
		return upgradeOutcome{}, errors.New(rpcErr.Message)
	case err == nil:
		return upgradeOutcome{}, errors.New("the daemon answered the upgrade without handing over")
	case errors.Is(err, context.DeadlineExceeded):
		return upgradeOutcome{}, fmt.Errorf("the daemon (pid %d, %s) gave no answer to the upgrade within %s; `agentd version --daemon` shows what it runs", before.Pid, before.Version, upgradeAnswerLimit)
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
			return upgradeOutcome{}, fmt.Errorf("the daemon did not answer after the handover: %w", err)
		}
		time.Sleep(20 * time.Millisecond) // a connection the old code took as it went
	}
	// The new code serves, and the code before watches it a moment more,
	// taking the sessions back should it die (handover_watch.go): the
	// upgrade is not over until that is.
	for after.Pid == before.Pid && after.LastUpgrade != nil && after.LastUpgrade.Settling && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		c, err := daemonlink.Hello(socket)
		if daemonlink.CanStart(err) {
			// The socket is gone: stopped, not died (a watchdog keeps the
			// socket of a daemon that died).
			return upgradeOutcome{}, fmt.Errorf("the daemon (pid %d) took over as %s, then ended (agentd stop?); no daemon runs now", after.Pid, after.Version)
		} else if err == nil {
			after = c.Hello.Daemon
			c.Close()
		}
	}
	out := upgradeOutcome{before: before, after: after, sessions: len(list.Sessions), took: time.Since(start)}
	last := after.LastUpgrade
	switch {
	case after.Pid != before.Pid && after.Instance == before.Instance && last != nil && last.Error != "":
		return out, fmt.Errorf("the upgrade failed: %s", last.Error)
	case after.Pid != before.Pid:
		return out, fmt.Errorf("a different daemon (pid %d, %s) answers now; the one upgraded was pid %d", after.Pid, after.Version, before.Pid)
	case last != nil && last.Settling:
		return out, fmt.Errorf("the daemon (pid %d) runs %s, but the code before it still watched it after %s", after.Pid, after.Version, upgradeAnswerLimit)
	case last == nil || (before.LastUpgrade != nil && *last == *before.LastUpgrade):
		return out, fmt.Errorf("the daemon (pid %d) closed the connection but did not hand over: it still runs %s", after.Pid, after.Version)
	case last.Error != "":
		return out, fmt.Errorf("the new code could not take over, and handed the sessions back to %s (pid %d): %s", after.Version, after.Pid, last.Error)
	case after.Version != last.To:
		return out, fmt.Errorf("the daemon (pid %d) runs %s, not %s, which it handed over to", after.Pid, after.Version, last.To)
	}
	return out, nil
}

// wantsUpgrade says whether a client of this build should ask the daemon
// d to hand over to it: d is older by version, speaks the same protocol,
// and nobody turned it off.
func wantsUpgrade(d protocol.Daemon) bool {
	return os.Getenv(envAutoUpgrade) != "0" && !d.Private && d.ProtocolVersion == protocol.ProtocolVersion &&
		protocol.CompareVersions(buildinfo.Version, d.Version) > 0
}

// autoUpgrade upgrades the daemon at socket to this binary, telling
// stderr what happened. A refusal is not an error: the older daemon
// serves on.
func autoUpgrade(socket string, d protocol.Daemon, stderr io.Writer) {
	self, err := upgradeBinary("")
	if err == nil {
		var out upgradeOutcome
		if out, err = requestUpgrade(socket, self, true); err == nil {
			fmt.Fprintf(stderr, "agentd: %s\n", out)
			return
		}
	}
	fmt.Fprintf(stderr, "agentd: warning: the daemon (pid %d) runs %s, older than this %s, and was not upgraded: %v\n", d.Pid, d.Version, buildinfo.Version, err)
}

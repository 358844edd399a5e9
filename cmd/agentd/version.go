//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/rpc/protocol"
)

// version and commit are stamped at build time: make build and make dist
// pass -ldflags "-X main.version=… -X main.commit=…" from git describe.
// buildinfo says them to every package, with the toolchain's commit where
// nothing was stamped.
var version, commit string

func init() { buildinfo.Stamp(version, commit) }

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fs, socket := newFlags("version", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	ofDaemon := fs.Bool("daemon", false, "the running daemon's version too: its pid, socket, uptime and last upgrade (starts none)")
	if rest, err := parseArgs(fs, args); err != nil {
		return exitUsage
	} else if len(rest) > 0 {
		fmt.Fprintf(stderr, "agentd version: unexpected %q (usage: agentd version [--json] [--daemon])\n", rest)
		return exitUsage
	}
	v := buildinfo.Current()
	if !*ofDaemon {
		if *asJSON {
			b, _ := json.Marshal(v)
			fmt.Fprintf(stdout, "%s\n", b)
			return exitOK
		}
		fmt.Fprintf(stdout, "agentd %s (protocol %d, %s/%s, %s)\n", v.Version, v.Protocol, v.OS, v.Arch, v.Go)
		return exitOK
	}
	path, err := daemonlink.SocketPath(*socket)
	if err != nil {
		return fail(stderr, "version", err)
	}
	var d *protocol.Daemon
	c, err := daemonlink.Hello(path)
	switch {
	case err == nil:
		d = &c.Hello.Daemon
		c.Close()
	case !daemonlink.CanStart(err):
		return fail(stderr, "version", fmt.Errorf("the daemon at %s: %w", path, err))
	}
	if *asJSON {
		b, _ := json.Marshal(struct {
			Client buildinfo.Info   `json:"client"`
			Daemon *protocol.Daemon `json:"daemon"` // null: none runs
		}{v, d})
		fmt.Fprintf(stdout, "%s\n", b)
		return exitOK
	}
	fmt.Fprintf(stdout, "client: agentd %s (protocol %d, %s/%s, %s)\n", v.Version, v.Protocol, v.OS, v.Arch, v.Go)
	if d == nil {
		fmt.Fprintf(stdout, "daemon: none runs at %s (the next agentd command starts one)\n", path)
		return exitOK
	}
	up := "?"
	if t, err := time.Parse(time.RFC3339Nano, d.StartedAt); err == nil {
		up = time.Since(t).Round(time.Second).String()
	}
	fmt.Fprintf(stdout, "daemon: agentd %s (protocol %d), pid %d, socket %s, up %s\n", d.Version, d.ProtocolVersion, d.Pid, path, up)
	if u := d.LastUpgrade; u != nil {
		how := fmt.Sprintf("sessions paused %d ms", u.PausedMs)
		switch {
		case u.Error != "":
			how = "failed, handed back: " + u.Error
		case u.Settling:
			how += "; the code before still watches it, and takes the sessions back should it die"
		}
		fmt.Fprintf(stdout, "last upgrade: %s to %s at %s (%s)\n", u.From, u.To, u.At, how)
	}
	return exitOK
}

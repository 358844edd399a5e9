//go:build unix

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/rpc/protocol"
)

// Version is `agentd version`: this build's, and with --daemon the
// running daemon's.
func Version(args []string, stdout, stderr io.Writer) int {
	fs, socket := Flags("version", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	ofDaemon := fs.Bool("daemon", false, "the running daemon's version too: its pid, socket, uptime and last upgrade (starts none)")
	if rest, err := ParseArgs(fs, args); err != nil {
		return ExitUsage
	} else if len(rest) > 0 {
		fmt.Fprintf(stderr, "agentd version: unexpected %q (usage: agentd version [--json] [--daemon])\n", rest)
		return ExitUsage
	}
	v := buildinfo.Current()
	if !*ofDaemon {
		if *asJSON {
			b, _ := json.Marshal(v)
			fmt.Fprintf(stdout, "%s\n", b)
			return ExitOK
		}
		fmt.Fprintf(stdout, "agentd %s (protocol %d, %s/%s, %s)\n", v.Version, v.Protocol, v.OS, v.Arch, v.Go)
		return ExitOK
	}
	path, err := daemonlink.SocketPath(*socket)
	if err != nil {
		return Fail(stderr, "version", err)
	}
	var d *protocol.Daemon
	c, err := daemonlink.Hello(path)
	switch {
	case err == nil:
		d = &c.Hello.Daemon
		c.Close()
	case !daemonlink.CanStart(err):
		return Fail(stderr, "version", fmt.Errorf("the daemon at %s: %w", path, err))
	}
	if *asJSON {
		b, _ := json.Marshal(struct {
			Client buildinfo.Info   `json:"client"`
			Daemon *protocol.Daemon `json:"daemon"` // null: none runs
		}{v, d})
		fmt.Fprintf(stdout, "%s\n", b)
		return ExitOK
	}
	fmt.Fprintf(stdout, "client: agentd %s (protocol %d, %s/%s, %s)\n", v.Version, v.Protocol, v.OS, v.Arch, v.Go)
	if d == nil {
		fmt.Fprintf(stdout, "daemon: none runs at %s (the next agentd command starts one)\n", path)
		return ExitOK
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
	return ExitOK
}

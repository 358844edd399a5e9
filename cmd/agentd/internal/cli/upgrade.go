//go:build unix

package cli

import (
	"fmt"
	"io"

	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/cmd/agentd/internal/upgrade"
)

// Upgrade is `agentd upgrade`: the daemon hands its sessions to this
// agentd, or to --binary.
func Upgrade(args []string, stdout, stderr io.Writer) int {
	fs, socket := Flags("upgrade", stderr)
	binary := fs.String("binary", "", "the agentd to hand the sessions to (default: this one)")
	if _, err := ParseArgs(fs, args); err != nil {
		return ExitUsage
	}
	path, err := daemonlink.SocketPath(*socket)
	if err != nil {
		return Fail(stderr, "upgrade", err)
	}
	target, err := upgrade.Binary(*binary)
	if err != nil {
		return Fail(stderr, "upgrade", err)
	}
	out, err := upgrade.Request(path, target, false)
	if err != nil {
		return Fail(stderr, "upgrade", err)
	}
	fmt.Fprintln(stdout, out)
	return ExitOK
}

//go:build unix

package forward

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
)

// Stdio is `agentd --stdio`, what editors start. By default it is a thin
// forwarder to the per-user daemon (started when none runs), so agents
// outlive the editor; with --private it serves in-process and its
// sessions end with stdin: private does that, the daemon's code, which
// this package does not carry. stdout carries only protocol; logs go to a
// file under the XDG state dir (and to stderr with --verbose).
func Stdio(args []string, stdin io.Reader, stdout, stderr io.Writer, private func(*daemonlink.ServerFlags, io.Reader, io.Writer, io.Writer) int) int {
	fs := flag.NewFlagSet("agentd --stdio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f daemonlink.ServerFlags
	f.Register(fs)
	inProcess := fs.Bool("private", false, "serve in this process: sessions end when stdin closes (no daemon)")
	socket := fs.String("socket", "", "the daemon's socket (default $AGENTD_SOCKET, else $XDG_RUNTIME_DIR/agentd/agentd.sock)")
	idle := fs.Duration("idle-timeout", 10*time.Minute, "for a daemon this starts: exit after this long with no session and no client")
	noStart := fs.Bool("no-start", false, "connect only to a daemon that runs: start none (initialize is answered with -32042 when none runs)")
	host := fs.String("host", "", "forward to the agentd of this host of config.toml's [[hosts]], over ssh (docs/hosts.md)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *host != "" {
		if *inProcess {
			fmt.Fprintln(stderr, "agentd --stdio: --host and --private: a private agentd is this process, on this machine")
			return 2
		}
		return toHost(*host, !*noStart, stdin, stdout, stderr)
	}
	if !*inProcess {
		return toDaemon(options{socket: *socket, flags: &f, idle: *idle, noStart: *noStart}, stdin, stdout, stderr)
	}
	return private(&f, stdin, stdout, stderr)
}

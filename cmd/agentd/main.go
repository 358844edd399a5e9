//go:build unix

// Command agentd hosts coding agents in pseudo-terminals, knows at every
// moment whether each is working, blocked on a person, idle, done, failed or
// gone, and tells every editor and terminal that asks.
//
//	agentd serve                   the per-user daemon that owns the sessions
//	agentd --stdio                 the editor's sidecar: forwards to the daemon
//	agentd ls|wait|answer|send|kill|attach|run|stop   the CLI, another client
//	agentd classify [flags] FILE…  classify captured screens
//	agentd explain [flags] FILE…   show how a screen was classified
//
// main only parses the command and hands it to the package under
// internal/ that does it, so those packages can be tested without building
// this binary.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/agentd/agentd/cmd/agentd/internal/cli"
	"github.com/agentd/agentd/cmd/agentd/internal/daemon"
	"github.com/agentd/agentd/cmd/agentd/internal/demo"
	"github.com/agentd/agentd/cmd/agentd/internal/demoagent"
	"github.com/agentd/agentd/cmd/agentd/internal/forward"
	"github.com/agentd/agentd/cmd/agentd/internal/keeper"
	"github.com/agentd/agentd/cmd/agentd/internal/report"
	"github.com/agentd/agentd/cmd/agentd/internal/screens"
	"github.com/agentd/agentd/cmd/agentd/internal/upgrade/handover"
	"github.com/agentd/agentd/cmd/agentd/internal/webhost"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "--stdio", "-stdio", "stdio":
		return forward.Stdio(rest, stdin, stdout, stderr, daemon.Private)
	case "serve":
		return daemon.Serve(rest, stdin, stdout, stderr)
	case "stop":
		return cli.Stop(rest, stdout, stderr)
	case "ls", "list":
		return cli.Ls(rest, stdout, stderr)
	case "wait":
		return cli.Wait(rest, stdout, stderr)
	case "answer":
		return cli.Answer(rest, stdout, stderr)
	case "send":
		return cli.Send(rest, stdout, stderr)
	case "kill":
		return cli.Kill(rest, stdout, stderr)
	case "attach":
		return cli.Attach(rest, stdout, stderr)
	case "run":
		return cli.Run(rest, stdout, stderr)
	case "upgrade":
		return cli.Upgrade(rest, stdout, stderr)
	case "web":
		return webhost.Run(rest, stdout, stderr)
	case "demo":
		return demo.Run(rest, stdout, stderr)
	case "demo-agent":
		return demoagent.Run(os.Stdin, stdout)
	case "keeper":
		return keeper.Run(stdin, stderr)
	case "handover-watch":
		return handover.Watch(rest, stderr)
	case "report":
		return report.Hook(rest, stdin, stderr)
	case "signal":
		return report.Signal(rest, stderr)
	case "capture":
		return screens.Capture(rest, stdout, stderr)
	case "doctor":
		return screens.Doctor(rest, stdout, stderr)
	case "hosts":
		return cli.Hosts(rest, stdout, stderr)
	case "classify":
		return screens.Classify(rest, stdout, stderr, false)
	case "explain":
		return screens.Classify(rest, stdout, stderr, true)
	case "version", "--version", "-version":
		return cli.Version(rest, stdout, stderr)
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "agentd: unknown command %q\n", cmd)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: agentd <command> [arguments]

Sessions belong to one agentd daemon per user; editors, Neovim and these
commands are its clients, and a client leaving ends no agent.

commands:
  --stdio [--private] [--socket PATH] [--verbose] [--cooldown 30s] [--log FILE] [--host NAME]
            what editors start: the editor protocol (JSON-RPC, LSP framing)
            on stdin/stdout, forwarded to the daemon (started when none
            runs); --private serves in-process, sessions ending with stdin;
            --host: to the agentd of a host of config.toml's [[hosts]]
  serve [--idle-timeout 10m] [--socket PATH] [--keep-exited 1h]
            run the daemon in the foreground
  stop [--force]
            end the daemon; --force also ends the sessions that still run
  upgrade [--binary PATH]
            hand the daemon's sessions to this agentd (or PATH): the
            agents run on with the same pids under the new code. To put a
            new build in place, mv it over the old (or make build): a
            running binary cannot be written over ("text file busy")
  ls [--json] [--all | -H HOST]
            list the sessions, with their states and prompts; --all: of
            every host in config.toml's [[hosts]], with a HOST column
  hosts [--json] [--configured]
            each configured host: reachable or not, its daemon's version,
            its sessions and how many wait on a person (docs/hosts.md);
            --configured: the entries as JSON, reaching none
  wait SESSION --until blocked|idle|done|working|error|exited|changed [--timeout D] [--json]
            wait for a state: exit 0 reached, 1 timed out, 3 ended first, 2 error
  answer SESSION OPTION | --text TEXT [--prompt ID]
            answer the prompt on screen (by option id or label), guarded
            like runtime_answer: a prompt that changed is not answered
  send SESSION TEXT... [--no-submit]
            type text into the agent (refused while it waits on a prompt)
  kill SESSION [--signal SIG]
            end a session (SIGHUP, then SIGKILL after 2 s)
  attach SESSION [--detach-key ctrl-\]
            the agent's screen in this terminal; the detach key leaves it running
  run [--name N] [--agent A] [--cwd DIR] [-H HOST] -- ARGV...
            start ARGV as a session in the daemon and attach to it
  web [--listen 127.0.0.1:7433] [--qr] [--rotate] [--allow-input] [--host NAME]
      [--hosts] [--tls-cert FILE --tls-key FILE] [--trusted-network]
            serve a page to watch and answer the sessions from a phone or a
            browser (docs/web.md): prints a one-time sign-in link, fresh
            at each start (the access token stays in its file); --hosts
            also shows every host of config.toml's [[hosts]], grouped by
            host, each over one ssh connection (never starting a daemon)
  SESSION is a session id or a unique name, or HOST:SESSION for one on a
  host of config.toml's [[hosts]] (as -H HOST does, on wait, answer, send,
  kill, attach, run and capture: reached with your own ssh); the daemon's
  socket is $AGENTD_SOCKET, else $XDG_RUNTIME_DIR/agentd/agentd.sock
  (--socket PATH).
  demo      see agentd at work: host the bundled demo agent, follow its
            states, answer its permission prompt with runtime_answer
  demo-agent
            the bundled demo agent itself, a program to host: try
            agentd run --name demo -- agentd demo-agent
  capture SESSION [-o FILE]
            write the session's screen to a file for a bug report: what
            draws it, what the rules read, its state (secrets redacted)
  doctor    list the screens the daemon kept where an agent's own report,
            or its busy processes, and its screen disagreed: screens the
            rules do not know
  classify [--agent NAME] [--cols N] [--rows N] [--screen] [--json] FILE...
            classify each captured screen (raw output, or a file agentd
            capture or doctor gave): agent, state, reason, prompt
  explain   [same flags] FILE...
            show the regions, every rule tried and what it matched
  signal working|needs-input|turn-ended|done
            from inside a session: tell agentd what this program is doing
  report EVENT
            what agentd's Claude Code hooks run (hook JSON on stdin)
  version [--json] [--daemon]
            print agentd's version (--json: version, commit, protocol, os,
            arch, go); --daemon: the running daemon's too, with its pid,
            socket, uptime and last upgrade
`)
}

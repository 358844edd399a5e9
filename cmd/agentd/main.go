// Command agentd hosts coding agents in pseudo-terminals, knows at every
// moment whether each is working, blocked on a person, idle, done, failed or
// gone, and tells the editor that started it.
//
//	agentd --stdio                 serve the editor protocol on stdin/stdout
//	agentd classify [flags] FILE…  classify captured screens
//	agentd explain [flags] FILE…   show how a screen was classified
package main

import (
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "--stdio", "-stdio", "stdio":
		return cmdStdio(args[1:], stdin, stdout, stderr)
	case "demo":
		return cmdDemo(args[1:], stdout, stderr)
	case "demo-agent":
		return cmdDemoAgent(os.Stdin, stdout)
	case "keeper":
		return cmdKeeper(stdin, stderr)
	case "report":
		return cmdReport(args[1:], stdin, stderr)
	case "signal":
		return cmdSignal(args[1:], stderr)
	case "classify":
		return cmdClassify(args[1:], stdout, stderr, false)
	case "explain":
		return cmdClassify(args[1:], stdout, stderr, true)
	case "version", "--version", "-version":
		fmt.Fprintf(stdout, "agentd %s\n", version)
		return 0
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "agentd: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: agentd <command> [arguments]

commands:
  --stdio [--verbose] [--cooldown 30s] [--log FILE]
            serve the editor protocol (JSON-RPC, LSP framing) on stdin/stdout
  demo      see agentd at work: host the bundled demo agent, follow its
            states, answer its permission prompt with runtime_answer
  classify [--agent NAME] [--cols N] [--rows N] [--screen] [--json] FILE...
            classify each captured screen: agent, state, reason, prompt
  explain   [same flags] FILE...
            show the regions, every rule tried and what it matched
  signal working|needs-input|turn-ended|done
            from inside a session: tell agentd what this program is doing
  report EVENT
            what agentd's Claude Code hooks run (hook JSON on stdin)
  version   print agentd's version
`)
}

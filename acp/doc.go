// Package acp is agentd's client for the Agent Client Protocol: it runs
// one ACP agent (Claude Code ACP, gemini --acp, …) as a child process,
// speaks newline-delimited JSON-RPC 2.0 (protocol version 1) on its
// stdio, opens one session and reports what the agent does to a Handler.
// The agent's session/request_permission is the authoritative "blocked"
// state: it stays in Pending until Answer, Cancel, the permission timeout
// or the agent's exit settles it.
//
//	c, err := acp.Start(ctx, acp.Options{Argv: argv, Cwd: dir, Handler: h})
//	stop, err := c.Prompt(ctx, "fix the tests")   // blocks for the turn
//	c.Answer(p.Key, p.Options[i].ID)               // from h.Permission
//	acp.Outcome(stop)                              // completed / interrupted / failed
//
// Transport: github.com/sourcegraph/jsonrpc2 with this package's own
// line-framed ObjectStream (one JSON object per line; a line that is not
// JSON-RPC is logged and skipped; lines are bounded by Options.MaxLine).
//
// Schema: the request and response types come from
// github.com/coder/acp-go-sdk (generated from the ACP JSON schema, no
// dependencies of its own) for everything the client sends and for the
// fs/* and terminal/* requests it serves. Its connection layer is not
// used: jsonrpc2 stays the transport, as elsewhere in agentd. Messages
// whose SDK types are closed unions (session/update, the tool call inside
// session/request_permission, initialize's authMethods) are read with
// small lenient structs here instead, because the SDK's union decoders
// reject variants they do not know (an agent's newer update kind or
// content block would fail the whole message); those messages are kept
// verbatim (Update.Raw, Permission.Raw) for forwarding.
//
// Client capabilities are advertised only when served: fs (Options.FS,
// confined to Cwd through os.Root) and terminal (Options.Terminals).
package acp

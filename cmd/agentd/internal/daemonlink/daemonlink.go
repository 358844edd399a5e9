//go:build unix

// Package daemonlink is how any agentd command reaches a daemon: this
// machine's per-user daemon at its socket (in a folder only its user can
// open), started when none answers, or another machine's named in
// config.toml's [[hosts]]. The CLI, the forwarder, the web page's server
// and the demo share it; it carries none of the daemon's own code, so
// they do not either.
package daemonlink

//go:build unix

package main

import "github.com/agentd/agentd/cmd/agentd/internal/buildinfo"

// version and commit are stamped at build time: make build and make dist
// pass -ldflags "-X main.version=… -X main.commit=…" from git describe.
// buildinfo says them to every package, with the toolchain's commit where
// nothing was stamped.
var version, commit string

func init() { buildinfo.Stamp(version, commit) }

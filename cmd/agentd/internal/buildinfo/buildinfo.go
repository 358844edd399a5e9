// Package buildinfo is which agentd this is: the version and commit
// package main was stamped with, read here by every package that says
// them (hello, version --json, the handover, the log).
package buildinfo

import (
	"runtime"
	"runtime/debug"

	"github.com/agentd/agentd/rpc/protocol"
)

// Version and Commit are this build's, as Stamp set them.
var Version, Commit string

// HandoverFormat is the newest format of the handover file
// (cmd/agentd/internal/upgrade/handover) this binary writes and reads. It
// is here, not there, because version --json says it, and the CLI that
// prints that must not carry the daemon's code.
const HandoverFormat = 1

// DevVersion is the version of a build that was not stamped.
const DevVersion = "0.1.0-dev"

// Stamp sets Version and Commit from what the build stamped (make build
// and make dist pass -X main.version=… -X main.commit=…). A plain go build
// or go run stamps neither; the commit the Go toolchain recorded then
// stands in, so that two builds of different commits never both say the
// same version.
func Stamp(version, commit string) {
	Version, Commit = stamp(version, commit, debug.ReadBuildInfo)
}

func stamp(v, c string, info func() (*debug.BuildInfo, bool)) (string, string) {
	var rev string
	var modified bool
	if bi, ok := info(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if c == "" {
		c = rev
	}
	if v == "" {
		v = DevVersion
		if rev != "" {
			v += "+" + rev[:min(len(rev), 12)]
			if modified {
				v += ".dirty"
			}
		}
	}
	return v, c
}

// Info is what agentd version --json prints, and what a daemon reads of
// a binary before it hands its sessions over to it.
type Info struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Protocol int    `json:"protocol"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Go       string `json:"go"`
	// Handover is the newest handover format this binary can take
	// sessions over in (agentd upgrade); 0 or absent: none.
	Handover int `json:"handover"`
}

// Current is this binary's Info.
func Current() Info {
	return Info{Version: Version, Commit: Commit, Protocol: protocol.ProtocolVersion,
		OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version(), Handover: HandoverFormat}
}

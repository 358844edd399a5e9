//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/agentd/agentd/rpc"
)

// version and commit are stamped at build time: make build and make dist
// pass -ldflags "-X main.version=… -X main.commit=…" from git describe.
// A plain go build or go run stamps neither; stampVersion then takes the
// commit the Go toolchain recorded, so that two builds of different
// commits never both say the same version.
var version, commit string

func init() { version, commit = stampVersion(version, commit, debug.ReadBuildInfo) }

// devVersion is the version of a build that was not stamped.
const devVersion = "0.1.0-dev"

func stampVersion(v, c string, info func() (*debug.BuildInfo, bool)) (string, string) {
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
		v = devVersion
		if rev != "" {
			v += "+" + rev[:min(len(rev), 12)]
			if modified {
				v += ".dirty"
			}
		}
	}
	return v, c
}

// versionInfo is what agentd version --json prints.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Protocol int    `json:"protocol"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	Go       string `json:"go"`
	// Handover is the newest handover format this binary can take
	// sessions over in (agentd upgrade; handover.go); 0 or absent: none.
	Handover int `json:"handover"`
}

func currentVersion() versionInfo {
	return versionInfo{Version: version, Commit: commit, Protocol: rpc.ProtocolVersion,
		OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version(), Handover: handoverFormat}
}

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		v := currentVersion()
		fmt.Fprintf(stdout, "agentd %s (protocol %d, %s/%s, %s)\n", v.Version, v.Protocol, v.OS, v.Arch, v.Go)
		return exitOK
	case len(args) == 1 && (args[0] == "--json" || args[0] == "-json"):
		b, _ := json.Marshal(currentVersion())
		fmt.Fprintf(stdout, "%s\n", b)
		return exitOK
	}
	fmt.Fprintf(stderr, "agentd version: unexpected %q (usage: agentd version [--json])\n", args)
	return exitUsage
}

package config

import (
	"fmt"
	"slices"
	"strings"
)

// Desktop is config.toml's [desktop] table.
type Desktop struct {
	// Notify turns desktop notices on or off (default on).
	Notify *bool `toml:"notify"`
	// States are the states that raise a notice (default blocked, done,
	// error).
	States []string `toml:"states"`
	// Hosts: the sessions of config.toml's [[hosts]] raise notices here
	// too, each naming its host (default on; rpc/notices/desktophosts.go).
	Hosts *bool `toml:"hosts"`
}

// DesktopStates are the states a notice may be raised for.
var DesktopStates = []string{"blocked", "done", "error"}

func (d *Desktop) check(path string) error {
	if len(d.States) == 0 {
		d.States = slices.Clone(DesktopStates)
	}
	for _, st := range d.States {
		if !slices.Contains(DesktopStates, st) {
			return fmt.Errorf("%s: [desktop] state %q: want some of %s", path, st, strings.Join(DesktopStates, ", "))
		}
	}
	return nil
}

// Enabled reports whether the config leaves desktop notices on.
func (d Desktop) Enabled() bool { return d.Notify == nil || *d.Notify }

// HostsEnabled reports whether other hosts' sessions raise notices here.
func (d Desktop) HostsEnabled() bool { return d.Enabled() && (d.Hosts == nil || *d.Hosts) }

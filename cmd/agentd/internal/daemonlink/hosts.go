//go:build unix

package daemonlink

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/adrg/xdg"

	"github.com/agentd/agentd/rpc/config"
)

// Many machines, one view: config.toml's [[hosts]] names other machines,
// reached over the person's ssh (rpc/hosts). docs/hosts.md.

// DialTimeout bounds reaching one host: ssh's own ConnectTimeout is 10 s,
// and the login and the daemon's answer come on top.
const DialTimeout = 30 * time.Second

// ConfiguredHosts is config.toml's [[hosts]], with this machine among them
// (as "local" where no entry says local = true).
func ConfiguredHosts() ([]config.Host, error) {
	cfg, err := config.Load(config.Path(xdg.ConfigHome))
	if err != nil {
		return nil, err
	}
	list := cfg.Hosts
	if !slices.ContainsFunc(list, func(h config.Host) bool { return h.Local }) {
		list = append([]config.Host{{Name: config.LocalHost, Local: true}}, list...)
	}
	return list, nil
}

// LookupHost finds the entry named name.
func LookupHost(list []config.Host, name string) (config.Host, error) {
	var names []string
	for _, h := range list {
		if h.Name == name {
			return h, nil
		}
		names = append(names, h.Name)
	}
	return config.Host{}, fmt.Errorf("no host %q in %s (hosts: %s)", name, config.Path(xdg.ConfigHome), strings.Join(names, ", "))
}

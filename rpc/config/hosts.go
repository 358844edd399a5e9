package config

import (
	"fmt"
	"regexp"
	"strings"
)

// Host is one [[hosts]] entry of config.toml: a machine whose agentd
// sessions `agentd ls --all`, `agentd -H NAME …` and `agentd web --hosts`
// show beside this one's. Another machine is reached with the person's
// own ssh (their keys, agent and known_hosts); agentd listens on no port
// for it. docs/hosts.md.
type Host struct {
	Name string `toml:"name"`
	// SSH is the destination as ssh takes it: host, user@host, or a Host
	// of ~/.ssh/config.
	SSH string `toml:"ssh"`
	// SSHOptions are more arguments for ssh, before the destination:
	// ["-p", "2222"], ["-o", "ProxyJump=bastion"].
	SSHOptions []string `toml:"ssh_options"`
	// Agentd is the command that runs agentd there, as the remote shell
	// reads it (default "agentd"; e.g. "~/.local/bin/agentd").
	Agentd string `toml:"agentd"`
	// Local is this machine, under the entry's name.
	Local bool `toml:"local"`
}

// LocalHost is the name this machine goes by where no [[hosts]] entry with
// local = true names it.
const LocalHost = "local"

// hostNameRe: a name that reads well in a column and before ":" in a
// session reference (host:session).
var hostNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$`)

// hostKeyBypass are ssh options that would take a machine's word for who
// it is. agentd answers prompts on the machines it reaches: one that an
// attacker could stand in for must not be reachable through it.
var hostKeyBypass = []string{"stricthostkeychecking=no", "stricthostkeychecking=off", "userknownhostsfile=/dev/null", "globalknownhostsfile=/dev/null"}

// checkHosts checks the [[hosts]] entries and fills in their defaults.
func checkHosts(path string, hosts []Host) error {
	seen := map[string]bool{}
	locals := 0
	for i := range hosts {
		h := &hosts[i]
		bad := func(format string, args ...any) error {
			name := h.Name
			if name == "" {
				name = fmt.Sprintf("#%d", i+1)
			}
			return fmt.Errorf("%s: [[hosts]] %q: %s", path, name, fmt.Sprintf(format, args...))
		}
		if !hostNameRe.MatchString(h.Name) {
			return bad("name %q: want letters, digits, '.', '_' or '-' (at most 32), starting with a letter or digit", h.Name)
		}
		if seen[h.Name] {
			return bad("the name is taken by another entry")
		}
		seen[h.Name] = true
		if h.Local == (h.SSH != "") {
			return bad("needs either ssh (a destination) or local = true, and not both")
		}
		if h.Local {
			if locals++; locals > 1 {
				return bad("another entry is local already")
			}
			if len(h.SSHOptions) > 0 || h.Agentd != "" {
				return bad("a local entry takes no ssh_options or agentd")
			}
			continue
		}
		if strings.HasPrefix(h.SSH, "-") || strings.ContainsAny(h.SSH, " \t\r\n") {
			return bad("ssh %q: want a destination such as user@host, not an option or several words", h.SSH)
		}
		for _, o := range h.SSHOptions {
			// "-oKey=value", "Key value" and "Key = value" alike.
			flat := strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(o, "\"", ""), "=", " "))
			flat = strings.Join(strings.Fields(flat), "=")
			for _, b := range hostKeyBypass {
				if strings.Contains(flat, b) {
					return bad("ssh_options %q: agentd does not reach a machine whose host key is not checked (docs/hosts.md)", o)
				}
			}
			if strings.ContainsAny(o, "\r\n") {
				return bad("ssh_options %q: a line break", o)
			}
		}
		if h.Agentd == "" {
			h.Agentd = "agentd"
		}
		if strings.ContainsAny(h.Agentd, "\r\n") {
			return bad("agentd %q: a line break", h.Agentd)
		}
	}
	return nil
}

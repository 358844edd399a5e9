package config

import (
	"strings"
	"testing"
)

// [[hosts]] entries: defaults filled in, and each way an entry can be
// wrong refused with a message that names the entry and the problem,
// a host-key bypass among them.
func TestHostsConfig(t *testing.T) {
	cfg, err := Load(writeConfig(t, `
[[hosts]]
name = "box"
ssh = "me@box.example"
ssh_options = ["-p", "2222", "-o", "ProxyJump=bastion"]

[[hosts]]
name = "laptop"
local = true
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Hosts) != 2 || cfg.Hosts[0].Agentd != "agentd" || cfg.Hosts[0].SSH != "me@box.example" || !cfg.Hosts[1].Local {
		t.Fatalf("hosts: %+v", cfg.Hosts)
	}
	for entry, want := range map[string]string{
		`name = "a b"` + "\nssh = \"x\"":                                         `name "a b": want letters`,
		`name = "box"` + "\nssh = \"x\"\n[[hosts]]\nname = \"box\"\nssh = \"y\"": `"box": the name is taken`,
		`name = "box"`: `needs either ssh (a destination) or local = true`,
		`name = "box"` + "\nssh = \"x\"\nlocal = true":                                             `needs either ssh`,
		`name = "box"` + "\nssh = \"-oProxyCommand=sh\"":                                           `not an option or several words`,
		`name = "box"` + "\nssh = \"x\"\nssh_options = [\"-o\", \"StrictHostKeyChecking=no\"]":     `host key is not checked`,
		`name = "box"` + "\nssh = \"x\"\nssh_options = [\"-oStrictHostKeyChecking no\"]":           `host key is not checked`,
		`name = "box"` + "\nssh = \"x\"\nssh_options = [\"-o\", \"UserKnownHostsFile /dev/null\"]": `host key is not checked`,
		`name = "me"` + "\nlocal = true\n[[hosts]]\nname = \"me2\"\nlocal = true":                  `another entry is local`,
		`name = "me"` + "\nlocal = true\nagentd = \"x\"":                                           `takes no ssh_options or agentd`,
		`name = "box"` + "\nssh = \"x\"\nport = 22":                                                `unknown key "hosts.port"`,
	} {
		_, err := Load(writeConfig(t, "[[hosts]]\n"+entry+"\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("[[hosts]] %q: error %v, want one saying %q", entry, err, want)
		}
	}
}

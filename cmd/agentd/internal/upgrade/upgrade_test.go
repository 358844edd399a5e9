//go:build unix

package upgrade

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/rpc/protocol"
)

// A client upgrades a daemon on its own only when the daemon is older
// by version, speaks its protocol, is not private, and nobody said no.
func TestWanted(t *testing.T) {
	was := buildinfo.Version
	defer func() { buildinfo.Version = was }()
	buildinfo.Version = "0.4.0"
	older := protocol.Daemon{Version: "0.3.0", ProtocolVersion: protocol.ProtocolVersion}
	if !Wanted(older) {
		t.Errorf("an older daemon is not upgraded")
	}
	for name, d := range map[string]protocol.Daemon{
		"the same version":    {Version: "0.4.0", ProtocolVersion: protocol.ProtocolVersion},
		"a newer daemon":      {Version: "0.5.0", ProtocolVersion: protocol.ProtocolVersion},
		"another build of it": {Version: "0.4.0+abc", ProtocolVersion: protocol.ProtocolVersion},
		"another protocol":    {Version: "0.3.0", ProtocolVersion: protocol.ProtocolVersion + 1},
		"a private agentd":    {Version: "0.3.0", ProtocolVersion: protocol.ProtocolVersion, Private: true},
	} {
		if Wanted(d) {
			t.Errorf("%s (%+v) would be upgraded", name, d)
		}
	}
	t.Setenv(EnvAuto, "0")
	if Wanted(older) {
		t.Errorf("%s=0: an older daemon would still be upgraded", EnvAuto)
	}
}

// A handover asked for by hand between versions that cannot be ordered
// says the new code may be the older.
func TestOrderWarning(t *testing.T) {
	if w := orderWarning("0.3.0", "0.4.0"); w != "" {
		t.Errorf("0.3.0 to 0.4.0: %q, want no warning", w)
	}
	if w := orderWarning("0.4.0", "0.4.0"); !strings.Contains(w, "this very version") {
		t.Errorf("to the same version: %q", w)
	}
	if w := orderWarning("0.1.0-dev+a", "0.1.0-dev+b"); !strings.Contains(w, "cannot be ordered") {
		t.Errorf("builds without a tag: %q", w)
	}
}

package rpc

import (
	"strings"
	"testing"
)

// The hello warning says which side is newer, and offers agentd upgrade
// only where it would be taken.
func TestVersionWarning(t *testing.T) {
	if w := versionWarning("0.3.0", "0.4.0"); !strings.Contains(w, "`agentd upgrade` hands the daemon's sessions to this newer agentd") {
		t.Errorf("an older daemon: %q", w)
	}
	if w := versionWarning("0.4.0", "0.3.0"); !strings.HasSuffix(w, "the daemon is the newer") || strings.Contains(w, "upgrade") {
		t.Errorf("a newer daemon: %q", w)
	}
	if w := versionWarning("0.1.0-dev+a", "0.1.0-dev+b"); !strings.Contains(w, "to this build") {
		t.Errorf("builds not ordered: %q", w)
	}
}

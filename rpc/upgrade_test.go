package rpc

import (
	"strings"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"0.4.0", "0.3.0", 1},
		{"v0.3.0", "0.4.0", -1},
		{"1.2.3-4-gabcdef", "1.2.3", 1}, // git describe: 4 commits past v1.2.3
		{"1.2.3-4-gabcdef-dirty", "1.2.3-10-g0123456", -1},
		{"1.2.3-4-gabcdef", "1.2.4-rc.1", -1},
		{"1.2.4-1-gabcdef", "1.2.3", 1},
		{"0.1.0-dev+aaaa", "0.1.0-dev+bbbb", 0}, // two untagged builds: neither is known newer
		{"nonsense", "0.1.0", 0},
		{"nonsense", "0.1.0-3-gabcdef", 0},
	} {
		if got := CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

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

package protocol

import "testing"

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

package buildinfo

import (
	"runtime/debug"
	"testing"
)

// A build make stamps keeps its version; one it did not stamp says the
// commit the toolchain recorded, so two such builds still differ.
func TestStamp(t *testing.T) {
	info := func(settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Settings: settings}, true }
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "0123456789abcdef0123"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	for _, tc := range []struct {
		v, c         string
		info         func() (*debug.BuildInfo, bool)
		wantV, wantC string
	}{
		{"1.2.3", "abc", info(rev), "1.2.3", "abc"},
		{"", "", info(rev), "0.1.0-dev+0123456789ab", "0123456789abcdef0123"},
		{"", "", info(rev, dirty), "0.1.0-dev+0123456789ab.dirty", "0123456789abcdef0123"},
		{"", "", info(), "0.1.0-dev", ""},
		{"", "", func() (*debug.BuildInfo, bool) { return nil, false }, "0.1.0-dev", ""},
	} {
		if v, c := stamp(tc.v, tc.c, tc.info); v != tc.wantV || c != tc.wantC {
			t.Errorf("stamp(%q, %q): %q, %q; want %q, %q", tc.v, tc.c, v, c, tc.wantV, tc.wantC)
		}
	}
}

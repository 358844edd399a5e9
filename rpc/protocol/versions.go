package protocol

import (
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/mod/semver"
)

// Versions are compared where a client meets a daemon: the daemon warns
// a client of another version (hello), and a client newer than the
// daemon asks it to hand its sessions over (agentd upgrade). Both sides
// must order two versions alike, so the order is declared here, with the
// protocol they share.

// CompareVersions orders two agentd versions: -1, 0 or 1. A version is a
// semantic version (a leading v optional), or what git describe makes of a
// commit past a tag, x.y.z-N-gHASH, which comes after x.y.z and after
// fewer commits past it (semver alone would take it for a pre-release).
// Versions that are neither, or builds that differ only in their
// +metadata (two untagged builds), compare equal: neither is known to be
// newer.
func CompareVersions(a, b string) int {
	ca, na, oka := describeParts(a)
	cb, nb, okb := describeParts(b)
	if oka || okb {
		if !semver.IsValid(ca) || !semver.IsValid(cb) {
			return 0
		}
		if c := semver.Compare(ca, cb); c != 0 {
			return c
		}
		return cmpInt(na, nb)
	}
	va, vb := "v"+strings.TrimPrefix(a, "v"), "v"+strings.TrimPrefix(b, "v")
	if !semver.IsValid(va) || !semver.IsValid(vb) {
		return 0
	}
	return semver.Compare(va, vb)
}

// gitDescribe is git describe's version of a commit past a tag.
var gitDescribe = regexp.MustCompile(`^v?(\d+\.\d+\.\d+)-(\d+)-g[0-9a-f]+(-dirty)?$`)

// describeParts splits a version into its x.y.z (as "vx.y.z") and the
// commits past it; ok says it was git describe's form. A plain x.y.z is
// zero commits past itself.
func describeParts(v string) (core string, commits int, ok bool) {
	if m := gitDescribe.FindStringSubmatch(v); m != nil {
		n, _ := strconv.Atoi(m[2])
		return "v" + m[1], n, true
	}
	return "v" + strings.TrimPrefix(v, "v"), 0, false
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

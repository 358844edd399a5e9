package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The staged extension takes the release's x.y.z; the rest of
// package.json is left as it was, and a version without x.y.z is refused.
func TestStampExtensionVersion(t *testing.T) {
	pkg := filepath.Join(t.TempDir(), "package.json")
	orig := "{\n  \"name\": \"agentd\",\n  \"version\": \"0.1.0\",\n  \"dependencies\": {\"x\": {\"version\": \"9.9.9\"}}\n}\n"
	if err := os.WriteFile(pkg, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := stampExtensionVersion(pkg, "v1.4.2-3-gabcdef", 812); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(pkg)
	if want := strings.Replace(orig, `"version": "0.1.0"`, `"version": "1.4.2"`, 1); string(b) != want {
		t.Errorf("package.json became\n%s\nwant\n%s", b, want)
	}
	if err := stampExtensionVersion(pkg, "dev", 812); err == nil || !strings.Contains(err.Error(), "x.y.z") {
		t.Errorf("a version without x.y.z: %v", err)
	}
}

// An untagged build's extension version grows with the commit count, so
// VS Code takes a newer dev .vsix for a newer one; a release's is its own.
func TestExtensionVersionOf(t *testing.T) {
	for _, c := range []struct {
		version string
		commits int
		want    string
	}{
		{"0.1.0-dev+abcdef123456", 812, "0.1.812"},
		{"0.1.0-dev+abcdef123456.dirty", 813, "0.1.813"},
		{"0.1.0-dev", 0, "0.1.0"},
		{"v1.4.2", 812, "1.4.2"},
		{"1.4.2-3-gabcdef", 812, "1.4.2"},
		{"0.1.0-device", 812, "0.1.0"},
	} {
		if got, err := extensionVersionOf(c.version, c.commits); err != nil || got != c.want {
			t.Errorf("extensionVersionOf(%q, %d) = %q, %v; want %q", c.version, c.commits, got, err, c.want)
		}
	}
}

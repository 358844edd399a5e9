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
	if err := stampExtensionVersion(pkg, "v1.4.2-3-gabcdef"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(pkg)
	if want := strings.Replace(orig, `"version": "0.1.0"`, `"version": "1.4.2"`, 1); string(b) != want {
		t.Errorf("package.json became\n%s\nwant\n%s", b, want)
	}
	if err := stampExtensionVersion(pkg, "dev"); err == nil || !strings.Contains(err.Error(), "x.y.z") {
		t.Errorf("a version without x.y.z: %v", err)
	}
}

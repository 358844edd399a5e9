package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The editors' copies of the protocol's names are what names.go declares:
// a change there without `go generate ./rpc/protocol` fails here (and so
// in CI), as does a hand edit of a generated file.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	n, err := parse(filepath.Join(root, "rpc", "protocol", "names.go"))
	if err != nil {
		t.Fatal(err)
	}
	for path, gen := range outputs {
		have, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatalf("%s: %v (run go generate ./rpc/protocol)", path, err)
		}
		if want := gen(n); !bytes.Equal(have, want) {
			t.Errorf("%s differs from what rpc/protocol/names.go declares: run go generate ./rpc/protocol and commit it", path)
		}
	}
	if len(n.Methods) < 20 || len(n.Notes) != 4 || len(n.Errors) < 20 {
		t.Errorf("names.go read as %d methods, %d notifications, %d error codes: the parse lost some", len(n.Methods), len(n.Notes), len(n.Errors))
	}
}

package program

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(bin, 0o755))
	must(os.WriteFile(filepath.Join(bin, "agent"), []byte("#!/bin/sh\n"), 0o755))
	must(os.WriteFile(filepath.Join(bin, "plain"), []byte("text"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "here"), []byte("#!/bin/sh\n"), 0o755))

	env := []string{"PATH=/nonexistent", "PATH=.:" + bin} // the last PATH wins, as for the child
	for _, c := range []struct{ name, want, err string }{
		{"agent", filepath.Join(bin, "agent"), ""},
		{"./here", filepath.Join(dir, "here"), ""},
		{"bin/agent", filepath.Join(bin, "agent"), ""},
		{"here", "", `program "here" not found on PATH`}, // "." in PATH is skipped
		{"plain", "", `program "plain" not found on PATH`},
		{"bin/plain", "", `program "bin/plain" is not executable`},
		{"./missing", "", `program "./missing" not found`},
	} {
		got, err := LookPath(c.name, dir, env)
		if c.err == "" && (err != nil || got != c.want) {
			t.Errorf("LookPath(%q) = %q, %v; want %q", c.name, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("LookPath(%q) = %q, %v; want an error with %q", c.name, got, err, c.err)
		}
	}
}

func TestSignalName(t *testing.T) {
	for sig, want := range map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.Signal(60): "SIG60"} {
		if got := SignalName(sig); got != want {
			t.Errorf("SignalName(%d) = %q, want %q", sig, got, want)
		}
	}
}

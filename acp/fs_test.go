package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fs/read_text_file and fs/write_text_file stay inside the session
// folder: "..", absolute paths elsewhere and symlinks that lead out are
// refused with a clear error; nothing outside is read or written. The
// requests come from the fake agent (real agents only ask for paths they
// believe are fine).
func TestFSConfinement(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{work, outside, filepath.Join(work, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(work, "inside.txt"), []byte("one\ntwo\nthree\n"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644))
	must(os.Symlink("../outside/secret.txt", filepath.Join(work, "link-out")))
	must(os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(work, "abs-out")))
	must(os.Symlink("../outside", filepath.Join(work, "dir-out")))
	must(os.Symlink("inside.txt", filepath.Join(work, "link-in")))

	type call struct {
		name, method string
		params       map[string]any
		code         int    // 0: success
		want         string // content read, or a piece of the error
	}
	read := func(p string) map[string]any { return map[string]any{"sessionId": "s1", "path": p} }
	write := func(p, content string) map[string]any {
		return map[string]any{"sessionId": "s1", "path": p, "content": content}
	}
	const rd, wr = "fs/read_text_file", "fs/write_text_file"
	calls := []call{
		{"read inside", rd, read(filepath.Join(work, "inside.txt")), 0, "one\ntwo\nthree\n"},
		{"read lines", rd, map[string]any{"sessionId": "s1", "path": filepath.Join(work, "inside.txt"), "line": 2, "limit": 1}, 0, "two\n"},
		{"read relative", rd, read("sub/../inside.txt"), 0, "one\ntwo\nthree\n"},
		{"read symlink inside", rd, read(filepath.Join(work, "link-in")), 0, "one\ntwo\nthree\n"},
		{"read dotdot", rd, read(filepath.Join(work, "..", "outside", "secret.txt")), -32602, "outside the session folder"},
		{"read dotdot relative", rd, read("../outside/secret.txt"), -32602, "outside the session folder"},
		{"read absolute elsewhere", rd, read("/etc/passwd"), -32602, "outside the session folder"},
		{"read symlink out", rd, read(filepath.Join(work, "link-out")), -32602, "through a symlink"},
		{"read absolute symlink out", rd, read(filepath.Join(work, "abs-out")), -32602, "through a symlink"},
		{"read through dir symlink", rd, read(filepath.Join(work, "dir-out", "secret.txt")), -32602, "through a symlink"},
		{"read missing", rd, read(filepath.Join(work, "missing.txt")), -32002, "no such file"},
		{"read folder", rd, read(work), -32603, "is a folder"},
		{"write new deep", wr, write(filepath.Join(work, "new", "deep", "file.txt"), "hello"), 0, ""},
		{"write over symlink out", wr, write(filepath.Join(work, "link-out"), "pwned"), -32602, "through a symlink"},
		{"write through dir symlink", wr, write(filepath.Join(work, "dir-out", "evil.txt"), "pwned"), -32602, "through a symlink"},
		{"write dotdot", wr, write(filepath.Join(work, "..", "escape.txt"), "pwned"), -32602, "outside the session folder"},
		{"write absolute elsewhere", wr, write(filepath.Join(outside, "evil2.txt"), "pwned"), -32602, "outside the session folder"},
		{"write no path", wr, map[string]any{"sessionId": "s1", "content": "x"}, -32602, "empty path"},
	}
	results := make(chan wire, len(calls))
	c, _, err := startFake(t, Options{Cwd: work, FS: true}, func(f *fakeAgent) {
		f.handshake("s1")
		for i, cl := range calls {
			f.request(100+i, cl.method, cl.params)
			results <- f.recv()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, cl := range calls {
		w := <-results
		if id, _ := idOf(w); id != 100+i {
			t.Errorf("%s: reply id %s", cl.name, w.ID)
		}
		if cl.code == 0 {
			if w.Error != nil {
				t.Errorf("%s: error %s", cl.name, w.Line)
				continue
			}
			if cl.method == rd {
				var res struct{ Content string }
				_ = json.Unmarshal(w.Result, &res)
				if res.Content != cl.want {
					t.Errorf("%s: content %q, want %q", cl.name, res.Content, cl.want)
				}
			}
			continue
		}
		if w.Error == nil || w.Error.Code != cl.code || !strings.Contains(w.Error.Message, cl.want) {
			t.Errorf("%s: got %s, want error %d containing %q", cl.name, w.Line, cl.code, cl.want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(work, "new", "deep", "file.txt")); err != nil || string(b) != "hello" {
		t.Errorf("written file: %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret" {
		t.Errorf("the file outside was changed: %q", b)
	}
	for _, p := range []string{filepath.Join(outside, "evil.txt"), filepath.Join(outside, "evil2.txt"), filepath.Join(root, "escape.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

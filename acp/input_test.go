package acp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPermissionInput(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, c := range []struct {
		name, raw string
		paths     []string
		want      string
	}{
		{"claude Bash", `{"command":"touch first.txt","description":"Create file"}`, nil, "touch first.txt"},
		{"codex argv", `{"command":["bash","-lc","touch a.txt"]}`, nil, "bash -lc touch a.txt"},
		{"edit", `{"file_path":"/w/a.go","old_string":"x","new_string":"y"}`, []string{"/w/a.go"}, "/w/a.go"},
		{"fetch", `{"url":"https://example.com/x","prompt":"summarize"}`, nil, "https://example.com/x"},
		{"only locations", `{}`, []string{"/w/a", "/w/b"}, "/w/a /w/b"},
		{"other fields", `{"b":2,"a":1}`, nil, `{"a":1,"b":2}`},
		{"multi-line script", `{"command":"set -e\nmake test"}`, nil, "set -e …"},
		{"long", `{"command":"` + long + `"}`, nil, strings.Repeat("a", maxInput-1) + "…"},
		{"nothing", ``, nil, ""},
		{"null", `null`, nil, ""},
	} {
		p := Permission{RawInput: json.RawMessage(c.raw), Paths: c.paths}
		if got := p.Input(); got != c.want {
			t.Errorf("%s: Input() = %q, want %q", c.name, got, c.want)
		}
	}
}

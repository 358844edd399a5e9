package detect

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzManifest: no manifest text crashes the loader, and one it accepts
// classifies any screen without crashing.
func FuzzManifest(f *testing.F) {
	files, _ := filepath.Glob("rules/*.toml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, "Do you want to proceed?\n ❯ 1. Yes\n   2. No\n Esc to cancel")
		}
	}
	f.Add([]byte("name='x'\n[[rule]]\nid='a'\nstate='idle'\nmatch=['(']"), "")
	f.Fuzz(func(t *testing.T, manifest []byte, screen string) {
		m, err := ParseManifest("fuzz.toml", manifest)
		if err != nil {
			return
		}
		v := m.Classify(ScreenFromText(screen, 80, 24))
		if v.State == StateBlocked && (v.Prompt == nil || len(v.Prompt.Options) == 0 && !v.Prompt.unread) {
			t.Fatalf("blocked without options: %+v", v)
		}
	})
}

// FuzzClassify: every built-in manifest classifies any rendered text, and
// never says blocked without options it can name, but for a menu it saw
// and could not read for sure (then with free text only).
func FuzzClassify(f *testing.F) {
	f.Add("Do you want to proceed?\n ❯ 1. Yes\n   2. No\n Esc to cancel")
	f.Add("│ ● 1. Allow once │\n│   2. Allow for this session │")
	f.Add("Continue? [Y/n] ")
	set, _ := Load(nil, "")
	f.Fuzz(func(t *testing.T, screen string) {
		sc := ScreenFromText(screen, 120, 40)
		for _, m := range set.Manifests() {
			v := m.Classify(sc)
			if v.State == StateBlocked && (v.Prompt == nil || len(v.Prompt.Options) == 0 && !(v.Prompt.unread && v.Prompt.Freeform)) {
				t.Fatalf("%s: blocked without options", m.Name)
			}
		}
		set.Identify(sc)
	})
}

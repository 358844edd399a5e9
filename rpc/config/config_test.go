package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// loadNotify is Load's [[notify]] entries.
func loadNotify(path string) ([]Notify, error) {
	cfg, err := Load(path)
	return cfg.Notify, err
}

// A config that makes no sense is refused with the file, the line or the
// entry, and what is wrong; a missing file is no entries.
func TestLoadNotify(t *testing.T) {
	if e, err := loadNotify(filepath.Join(t.TempDir(), "none.toml")); e != nil || err != nil {
		t.Fatalf("a missing file: %v, %v", e, err)
	}
	for body, want := range map[string]string{
		"[[notify]]\nname = \"x\"\n": `"x": needs either command (an argv) or url, and not both`,
		"[[notify]]\nname = \"x\"\nurl = \"http://a\"\ncommand = [\"true\"]\n": `not both`,
		"[[notify]]\nname = \"x\"\nurl = \"ftp://a\"\n":                        `url "ftp://a": want an http or https address`,
		"[[notify]]\nurl = \"http://a\"\nstates = [\"sleepy\"]\n":              `"notify #1": state "sleepy"`,
		"[[notify]]\nurl = \"http://a\"\ntimeout = \"1h\"\n":                   `timeout "1h"`,
		"[[notify]]\nurl = \"http://a\"\nflavour = 1\n":                        `unknown key "notify.flavour"`,
		"[[notify]\n": `config.toml:2: expected end of table array name delimiter`,
	} {
		_, err := loadNotify(writeConfig(t, body))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "config.toml") {
			t.Errorf("config:\n%s\nerror %v, want it to name the file and contain %q", body, err, want)
		}
	}
	e, err := loadNotify(writeConfig(t, "[[notify]]\nname = \"pager\"\ncommand = [\"true\"]\n"))
	if err != nil || len(e) != 1 || e[0].States[0] != "blocked" || e[0].Limit != 10*time.Second {
		t.Fatalf("defaults: %+v, %v", e, err)
	}
}

// [desktop] in config.toml: states are checked, notify = false turns the
// notices off.
func TestLoadDesktopConfig(t *testing.T) {
	cfg, err := Load(writeConfig(t, "[desktop]\nnotify = false\n"))
	if err != nil || cfg.Desktop.Enabled() {
		t.Fatalf("notify = false: %+v, %v", cfg.Desktop, err)
	}
	cfg, err = Load(writeConfig(t, "[desktop]\nstates = [\"blocked\"]\n"))
	if err != nil || !cfg.Desktop.Enabled() || fmt.Sprint(cfg.Desktop.States) != "[blocked]" {
		t.Fatalf("states: %+v, %v", cfg.Desktop, err)
	}
	if _, err := Load(writeConfig(t, "[desktop]\nstates = [\"working\"]\n")); err == nil || !strings.Contains(err.Error(), `[desktop] state "working": want some of blocked, done, error`) {
		t.Fatalf("a bad state: %v", err)
	}
}

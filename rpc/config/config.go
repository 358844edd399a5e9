// Package config reads $XDG_CONFIG_HOME/agentd/config.toml: the
// [[notify]] entries, the [desktop] table and the [[hosts]] entries. A
// file that does not parse, or an entry that makes no sense, is an error
// that names the file, the line where toml knows it, and the entry.
// docs/notify.md and docs/hosts.md.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Notify is one [[notify]] entry of config.toml.
type Notify struct {
	Name    string   `toml:"name"`
	States  []string `toml:"states"`  // default: ["blocked"]
	Command []string `toml:"command"` // argv; the event as JSON on stdin
	URL     string   `toml:"url"`     // POST the event as JSON
	Timeout string   `toml:"timeout"` // default 10s, at most 5m

	// Limit is Timeout as read: how long a run may take.
	Limit time.Duration `toml:"-"`
}

// notifyStates are the states a [[notify]] entry may name.
var notifyStates = []string{"blocked", "done", "error", "exited", "working", "idle"}

// File is config.toml: the [[notify]] entries, the [desktop]
// table and the [[hosts]] entries.
type File struct {
	Notify  []Notify `toml:"notify"`
	Desktop Desktop  `toml:"desktop"`
	Hosts   []Host   `toml:"hosts"`
}

// Load reads the config file at path. A missing file is the
// defaults. A file that does not parse, or an entry that makes no sense,
// is an error that names the file, the line where toml knows it, and the
// entry.
func Load(path string) (File, error) {
	var cfg File
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, err
	}
	md, err := toml.Decode(string(data), &cfg)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return File{}, fmt.Errorf("%s:%d: %s", path, perr.Position.Line, perr.Message)
		}
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return File{}, fmt.Errorf("%s: unknown key %q", path, und[0].String())
	}
	if err := cfg.Desktop.check(path); err != nil {
		return File{}, err
	}
	if err := checkHosts(path, cfg.Hosts); err != nil {
		return File{}, err
	}
	for i := range cfg.Notify {
		e := &cfg.Notify[i]
		if e.Name == "" {
			e.Name = fmt.Sprintf("notify #%d", i+1)
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s: [[notify]] %q: %s", path, e.Name, fmt.Sprintf(format, args...))
		}
		if (len(e.Command) == 0) == (e.URL == "") {
			return File{}, bad("needs either command (an argv) or url, and not both")
		}
		if e.URL != "" {
			u, err := url.Parse(e.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return File{}, bad("url %q: want an http or https address", e.URL)
			}
		}
		if len(e.States) == 0 {
			e.States = []string{"blocked"}
		}
		for _, st := range e.States {
			if !slices.Contains(notifyStates, st) {
				return File{}, bad("state %q: want some of %s", st, strings.Join(notifyStates, ", "))
			}
		}
		e.Limit = 10 * time.Second
		if e.Timeout != "" {
			d, err := time.ParseDuration(e.Timeout)
			if err != nil || d <= 0 || d > 5*time.Minute {
				return File{}, bad("timeout %q: want a duration up to 5m, such as \"10s\"", e.Timeout)
			}
			e.Limit = d
		}
	}
	return cfg, nil
}

// Path is where agentd reads its config, under $XDG_CONFIG_HOME.
func Path(configHome string) string {
	return filepath.Join(configHome, "agentd", "config.toml")
}

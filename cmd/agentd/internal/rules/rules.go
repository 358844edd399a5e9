//go:build unix

// Package rules loads the detection rules as agentd runs them: the
// built-in manifests, with a person's own in $XDG_CONFIG_HOME/agentd/rules
// replacing them.
package rules

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/adrg/xdg"

	"github.com/agentd/agentd/detect"
)

// Dir is where a person's manifests replace the built-in ones.
func Dir() string {
	return filepath.Join(xdg.ConfigHome, "agentd", "rules")
}

// Load reads the user's manifest overrides and builds the rule set.
// Problems are warnings: the built-in manifests always work.
func Load() (*detect.Set, []error) {
	dir := Dir()
	overrides := map[string][]byte{}
	var warnings []error
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		warnings = append(warnings, err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".toml") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			warnings = append(warnings, err)
			continue
		}
		overrides[e.Name()] = data
	}
	set, more := detect.Load(overrides, dir)
	return set, append(warnings, more...)
}

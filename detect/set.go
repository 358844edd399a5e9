package detect

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
)

//go:embed rules/*.toml
var embedded embed.FS

// Generic is the manifest used when no agent is recognised.
const Generic = "generic"

// Shell is the manifest of an interactive shell, which agentd uses for the
// terminals an ACP agent asks for.
const Shell = "shell"

// Set is every manifest agentd knows, by agent name.
type Set struct {
	byName map[string]*Manifest
	names  []string
}

// Load builds the set from the embedded manifests. overrides maps a file
// name (e.g. "claude.toml") to the contents of a user's replacement; a broken
// override falls back to the embedded manifest and is reported as a
// warning. The set is usable whatever the warnings say.
func Load(overrides map[string][]byte, overrideDir string) (*Set, []error) {
	s := &Set{byName: map[string]*Manifest{}}
	var warnings []error
	files, _ := embedded.ReadDir("rules")
	builtin := map[string]bool{}
	for _, f := range files {
		builtin[f.Name()] = true
		data, _ := embedded.ReadFile("rules/" + f.Name())
		if o, ok := overrides[f.Name()]; ok {
			m, err := ParseManifest(path.Join(overrideDir, f.Name()), o)
			if err == nil {
				s.add(m)
				continue
			}
			warnings = append(warnings, fmt.Errorf("%w (using the built-in %s)", err, f.Name()))
		}
		m, err := ParseManifest("rules/"+f.Name(), data)
		if err != nil {
			warnings = append(warnings, err)
			continue
		}
		s.add(m)
	}
	// An override for an agent agentd does not ship adds that agent.
	for name, o := range overrides {
		if builtin[name] || !strings.HasSuffix(name, ".toml") {
			continue
		}
		m, err := ParseManifest(path.Join(overrideDir, name), o)
		if err != nil {
			warnings = append(warnings, err)
			continue
		}
		s.add(m)
	}
	sort.Strings(s.names)
	for _, n := range s.names {
		m := s.byName[n]
		if m.Extends == "" || len(m.Rules) > 0 {
			continue
		}
		base, ok := s.byName[m.Extends]
		if !ok || base.Extends != "" {
			warnings = append(warnings, fmt.Errorf("%s: extends %q: no such manifest (or it extends another)", m.Source, m.Extends))
			continue
		}
		m.Regions, m.regions, m.Rules, m.Prompts = base.Regions, base.regions, base.Rules, base.Prompts
		m.prepareReuse()
	}
	return s, warnings
}

func (s *Set) add(m *Manifest) {
	if _, dup := s.byName[m.Name]; !dup {
		s.names = append(s.names, m.Name)
	}
	s.byName[m.Name] = m
}

// Lookup returns the manifest named name.
func (s *Set) Lookup(name string) (*Manifest, bool) {
	m, ok := s.byName[name]
	return m, ok
}

// Names lists the agents in the set.
func (s *Set) Names() []string { return append([]string(nil), s.names...) }

// Manifests lists every manifest, by name.
func (s *Set) Manifests() []*Manifest {
	out := make([]*Manifest, 0, len(s.names))
	for _, n := range s.names {
		out = append(out, s.byName[n])
	}
	return out
}

// Identify names the agent whose title or screen signature the screen
// shows; it falls back to the generic manifest. An agent that names itself
// in the title (or in its OSC 7501 app) wins over one whose screen merely
// looks alike: forks draw their parents' screens (Kilo's are OpenCode's
// but for its title), so screen patterns only choose among the agents
// the title allows, or among all when no title says.
func (s *Set) Identify(sc Screen) *Manifest {
	var best *Manifest
	bestScore, bestNamed := 0, false
	text := ""
	for _, n := range s.names {
		m := s.byName[n]
		score, named := 0, false
		for _, re := range m.Identify.title {
			if re.MatchString(sc.Title) {
				score, named = score+3, true
				break
			}
		}
		if sc.Status != nil && sc.Status.App != "" && containsFold(m.Identify.Process, sc.Status.App) {
			score, named = score+4, true
		}
		if len(m.Identify.screen) > 0 {
			if text == "" {
				text = sc.Text()
			}
			for _, re := range m.Identify.screen {
				if re.MatchString(text) {
					score += 2
				}
			}
		}
		if score > 0 && (named && !bestNamed || named == bestNamed && score > bestScore) {
			best, bestScore, bestNamed = m, score, named
		}
	}
	if best == nil {
		best = s.byName[Generic]
	}
	return best
}

// IdentifyProcess names the agent a process is, from its name and argv:
// argv[0]'s base name counts most, then the process name, then argv tokens
// inside a wrapper such as node or npx. It returns nil when none fits.
func (s *Set) IdentifyProcess(comm string, argv []string) *Manifest {
	var best *Manifest
	bestScore := 0
	argv0 := ""
	if len(argv) > 0 {
		argv0 = path.Base(argv[0])
	}
	for _, n := range s.names {
		m := s.byName[n]
		score := 0
		switch {
		case argv0 != "" && containsFold(m.Identify.Process, argv0):
			score = 3
		case comm != "" && containsFold(m.Identify.Process, comm):
			score = 2
		default:
			for _, a := range argv[min(1, len(argv)):] {
				if matchesArgv(m, a) {
					score = 1
					break
				}
			}
		}
		if score > bestScore {
			best, bestScore = m, score
		}
	}
	return best
}

func matchesArgv(m *Manifest, arg string) bool {
	base := path.Base(arg)
	for _, h := range m.Identify.Argv {
		if strings.Contains(arg, h) {
			return true
		}
	}
	return containsFold(m.Identify.Process, base)
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

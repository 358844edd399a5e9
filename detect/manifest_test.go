package detect

import (
	"strings"
	"testing"
)

// Each broken manifest is reported as file:line: rule: what is wrong.
func TestManifestErrors(t *testing.T) {
	tests := []struct{ toml, want string }{
		{"name = \"x\"\n[[rule]]\nid = \"a\"\nstate = \"sleepy\"\nmatch = ['x']\n", `x.toml:2: rule "a": state "sleepy"`},
		{"name = \"x\"\n[[rule]]\nid = \"a\"\nstate = \"idle\"\nmatch = ['(']\n", `x.toml:5: rule "a": match: "(": missing closing )`},
		{"name = \"x\"\n[[rule]]\nid = \"a\"\nstate = \"idle\"\nmatch = ['x']\n[[rule]]\nid = \"b\"\nstate = \"blocked\"\nmatch = ['y']\nprompt = \"p\"\n[prompt.p]\nkind = \"permission\"\noption = '(?P<label>x)'\nkeys = \"{id}\"\n", `x.toml:6: rule "b": blocked rules must come before all others`},
		{"name = \"x\"\n[[rule]]\nid = \"a\"\nstate = \"blocked\"\nmatch = ['y']\n", `rule "a": a blocked rule needs a prompt parser`},
		{"name = \"x\"\n[prompt.p]\nkind = \"permission\"\noption = '(x)'\nkeys = \"{id}\"\n", `x.toml:4: prompt "p": option: needs a (?P<label>…) group`},
		{"name = \"x\"\n[prompt.p]\nkind = \"permission\"\noption = '(?P<label>x)'\nkeys = \"<f13>\"\n", `x.toml:5: prompt "p": keys: unknown key <f13>`},
		{"name = \"x\"\n[[rule]]\nid = \"a\"\nstate = \"idle\"\nregion = \"nowhere\"\nmatch = ['x']\n", `rule "a": unknown region "nowhere"`},
		{"name = \"x\"\n[[rule]]\nid = \"a\"\nstate = \"idle\"\nmatch = ['" + strings.Repeat("a", MaxPatternLength+1) + "']\n", `at most 512 allowed`},
		{"name = \"x\"\n[[rule]]\nid = \"a\"\nstate = \"idle\"\nmatch = ['x']\n[[rule]]\nid = \"a\"\nstate = \"idle\"\nmatch = ['x']\n", `x.toml:6: rule "a": id used twice`},
		{"name = \"x\"\nrule = 3\n", `x.toml`},
		{"name = \"x\"\n[[rule]\n", `x.toml:3: expected end of table array name delimiter`},
		{"name = \"x\"\nflavour = 1\n", `x.toml:2: unknown key "flavour"`},
		{"name = \"x\"\n[reports]\nhooks = \"gemini-settings\"\n", `x.toml:3: reports.hooks "gemini-settings": agentd gives hooks of the kind "claude-settings" only`},
		{"name = \"x\"\n[reports]\nlog = \"syslog\"\n", `x.toml:3: reports.log "syslog": agentd reads logs of the kind "codex-rollout" only`},
		{"name = \"x\"\n[input]\nsubmit_after = \"soon\"\n", `x.toml:3: input.submit_after "soon": want a duration from 0 to 10s`},
		{"name = \"x\"\n[input]\nsubmit_after = \"11s\"\n", `input.submit_after "11s"`},
		{"name = \"x\"\n[[rule]]\nid = \"a\"\nstate = \"idle\"\nbackground = true\nmatch = ['x']\n", `x.toml:2: rule "a": background: only working rules have it`},
	}
	for _, tc := range tests {
		_, err := ParseManifest("x.toml", []byte(tc.toml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("manifest:\n%s\nerror %v, want it to contain %q", tc.toml, err, tc.want)
		}
	}
}

// [input] submit_after sets how long the Enter after sent text waits; 30 ms
// without it.
func TestSubmitDelay(t *testing.T) {
	for toml, want := range map[string]string{"name = \"x\"\n": "30ms", "name = \"x\"\n[input]\nsubmit_after = \"1500ms\"\n": "1.5s"} {
		m, err := ParseManifest("x.toml", []byte(toml))
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Input.SubmitDelay().String(); got != want {
			t.Errorf("%q: SubmitDelay %s, want %s", toml, got, want)
		}
	}
}

func TestTooManyRules(t *testing.T) {
	var b strings.Builder
	b.WriteString("name = \"x\"\n")
	for i := range MaxRules + 1 {
		b.WriteString("[[rule]]\nid = \"r" + itoa(i) + "\"\nstate = \"idle\"\nmatch = ['x']\n")
	}
	if _, err := ParseManifest("x.toml", []byte(b.String())); err == nil || !strings.Contains(err.Error(), "at most 128") {
		t.Fatalf("error %v", err)
	}
}

// A broken user override falls back to the built-in manifest with a warning.
func TestBrokenOverrideFallsBack(t *testing.T) {
	set, warnings := Load(map[string][]byte{"generic.toml": []byte("name = \"generic\"\n[[rule]]\nid = \"a\"\n")}, "/home/me/.config/agentd/rules")
	if len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "/home/me/.config/agentd/rules/generic.toml") || !strings.Contains(warnings[0].Error(), "using the built-in generic.toml") {
		t.Fatalf("warnings %v", warnings)
	}
	m, ok := set.Lookup("generic")
	if !ok || m.Source != "rules/generic.toml" {
		t.Fatalf("generic = %+v", m)
	}
}

func TestRegions(t *testing.T) {
	s := ScreenFromText("transcript ❯ 1. Yes\n────\n> draft\n────\nfooter\n\n", 40, 8)
	r := Region{Bottom: 3}
	if got := strings.Join(r.rows(s), "|"); got != "> draft|────|footer" {
		t.Fatalf("bottom 3 = %q", got)
	}
	r2 := Region{Bottom: 4}
	r2.before, _ = compileOne(`^─+$`)
	r2.after, _ = compileOne(`^─+$`)
	if got := strings.Join(r2.rows(s), "|"); got != "footer" {
		t.Fatalf("after last rule = %q", got)
	}
}

func TestProgressRegion(t *testing.T) {
	m, err := ParseManifest("p.toml", []byte("name = \"p\"\n[[region]]\nname = \"bar\"\nsource = \"progress\"\n[[rule]]\nid = \"busy\"\nstate = \"working\"\nregion = \"bar\"\nmatch = ['^(?:normal|indeterminate) ']\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := ScreenFromText("", 10, 2)
	if v := m.Classify(s); v.State != StateIdle {
		t.Fatalf("no progress: %s", v.State)
	}
	s.Progress = Progress{State: 3}
	if v := m.Classify(s); v.State != StateWorking {
		t.Fatalf("indeterminate progress: %s (%s)", v.State, v.Reason)
	}
}

// What an agent reports besides its screen, and whether it is a shell, are
// manifest keys: the embedded manifests say them for Claude Code, Codex and
// the shell, and a user's manifest may say them for any agent.
func TestReportsAndShellAreManifestKeys(t *testing.T) {
	set, warnings := Load(nil, "")
	if len(warnings) > 0 {
		t.Fatal(warnings)
	}
	get := func(name string) *Manifest {
		m, ok := set.Lookup(name)
		if !ok {
			t.Fatalf("no manifest %q", name)
		}
		return m
	}
	for name, want := range map[string]Reports{
		"claude": {Hooks: HooksClaudeSettings},
		"codex":  {Log: LogCodexRollout},
		"gemini": {},
	} {
		if got := get(name).Reports; got != want {
			t.Errorf("%s: reports %+v, want %+v", name, got, want)
		}
	}
	if !get(Shell).Identify.Shell || get("claude").Identify.Shell {
		t.Errorf("identify.shell: shell %v, claude %v", get(Shell).Identify.Shell, get("claude").Identify.Shell)
	}
	m, err := ParseManifest("myagent.toml", []byte("name = \"myagent\"\n[identify]\nshell = true\n[reports]\nhooks = \"claude-settings\"\nlog = \"codex-rollout\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Identify.Shell || m.Reports != (Reports{Hooks: HooksClaudeSettings, Log: LogCodexRollout}) {
		t.Errorf("a user's manifest: shell %v, reports %+v", m.Identify.Shell, m.Reports)
	}
}

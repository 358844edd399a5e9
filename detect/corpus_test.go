package detect_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions/term"
)

// capture is one labelled fixture: raw PTY bytes and what a person saw.
type capture struct {
	Path string `json:"-"`
	recording.Capture
	misdetected bool
}

// fixtureRoot is the committed corpus; AGENTD_FIXTURES points the tests at
// a fresh recording instead (the live conformance run in .ci/run).
var fixtureRoot = func() string {
	if d := os.Getenv("AGENTD_FIXTURES"); d != "" {
		return d
	}
	return committedRoot
}()

// fixtureSubset says what the recording in AGENTD_FIXTURES holds: every
// scenario (unset: make conformance) or "smoke", each agent's smoke subset
// (make conformance-smoke, what CI records). A check that wants every rule
// exercised or a number of captures holds for the full corpus only; a
// smoke recording is checked for what its subset promises instead
// (TestCorpusSmokeSubset). The committed corpus is always checked in full.
var fixtureSubset = os.Getenv("AGENTD_FIXTURES_SUBSET")

// fullCorpus reports whether the corpus under test is a full one; a
// subset other than smoke, or smoke for the committed corpus, stops the test.
func fullCorpus(t testing.TB) bool {
	t.Helper()
	switch fixtureSubset {
	case "":
		return true
	case "smoke":
		if os.Getenv("AGENTD_FIXTURES") == "" {
			t.Fatal("AGENTD_FIXTURES_SUBSET=smoke without AGENTD_FIXTURES: the committed corpus is checked in full")
		}
		return false
	}
	t.Fatalf("AGENTD_FIXTURES_SUBSET=%q: the only subset is smoke", fixtureSubset)
	return false
}

// committedRoot is the committed corpus, whatever AGENTD_FIXTURES says.
const committedRoot = "../fixtures"

// loadCorpus finds fixtures/<agent>/<version>/<state>/<name>.raw with their
// .json labels; known-misdetection/ captures are marked as such.
func loadCorpus(t testing.TB) []capture {
	t.Helper()
	return loadCorpusFrom(t, fixtureRoot)
}

func loadCorpusFrom(t testing.TB, root string) []capture {
	t.Helper()
	var out []capture
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "sessions", "logs", "agents", "record", "fakemodel", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".raw") {
			return nil
		}
		meta, err := os.ReadFile(strings.TrimSuffix(p, ".raw") + ".json")
		if err != nil {
			t.Errorf("%s: no label file beside it: %v", p, err)
			return nil
		}
		var c capture
		if err := json.Unmarshal(meta, &c); err != nil {
			t.Errorf("%s: bad label: %v", p, err)
			return nil
		}
		c.Path = p
		c.misdetected = filepath.Base(filepath.Dir(p)) == "known-misdetection"
		if !c.misdetected && filepath.Base(filepath.Dir(p)) != c.State {
			t.Errorf("%s: labelled %q but filed under %q", p, c.State, filepath.Base(filepath.Dir(p)))
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func loadSet(t testing.TB) *detect.Set {
	t.Helper()
	set, warnings := detect.Load(nil, "")
	for _, w := range warnings {
		t.Errorf("built-in manifest: %v", w)
	}
	return set
}

func (c capture) screen(t testing.TB) detect.Screen {
	raw, err := os.ReadFile(c.Path)
	if err != nil {
		t.Fatal(err)
	}
	return term.Render(raw, c.Cols, c.Rows)
}

// check compares a verdict with the capture's label and returns what differs.
func (c capture) check(v detect.Verdict) []string {
	var bad []string
	if v.State != c.State {
		bad = append(bad, "state "+v.State+" ("+v.Reason+"), want "+c.State)
	}
	if c.State == detect.StateDone && c.Outcome != "" && v.State == detect.StateDone && v.Outcome != c.Outcome {
		bad = append(bad, "outcome "+v.Outcome+", want "+c.Outcome)
	}
	if c.State == detect.StateBlocked && v.State == detect.StateBlocked && c.Prompt != nil {
		switch {
		case detect.GenericReader(v.Reason):
			// The generic reader knows no agent's layout: which of a page's
			// headings asks is a person's call. It must give one.
			if strings.TrimSpace(v.Prompt.Question) == "" {
				bad = append(bad, "no question, want one such as "+quote(c.Prompt.Question))
			}
		case v.Prompt.Question != c.Prompt.Question:
			bad = append(bad, "question "+quote(v.Prompt.Question)+", want "+quote(c.Prompt.Question))
		}
		if v.Prompt.Kind != c.Prompt.Kind {
			bad = append(bad, "kind "+v.Prompt.Kind+", want "+c.Prompt.Kind)
		}
		var labels []string
		for _, o := range v.Prompt.Options {
			labels = append(labels, o.Label)
			if o.Keys == "" {
				bad = append(bad, "option "+quote(o.Label)+" has no answer keys")
			}
		}
		if strings.Join(labels, "|") != strings.Join(c.Prompt.Options, "|") {
			bad = append(bad, "options "+quote(strings.Join(labels, " | "))+", want "+quote(strings.Join(c.Prompt.Options, " | ")))
		}
		bad = append(bad, checkSubject(v.Prompt.Subject, c.Prompt.Subject)...)
	}
	return bad
}

// checkSubject compares a prompt's subject with its label: none where the
// label has none; kind, text and truncated as labelled, and the detail
// where the label gives one.
func checkSubject(got *detect.Subject, want *recording.Subject) []string {
	switch {
	case got == nil && want == nil:
		return nil
	case want == nil:
		return []string{"subject " + got.Kind + " " + quote(got.Text) + ", want none"}
	case got == nil:
		return []string{"no subject, want " + want.Kind + " " + quote(want.Text)}
	}
	var bad []string
	if got.Kind != want.Kind || got.Text != want.Text || got.Truncated != want.Truncated {
		bad = append(bad, fmt.Sprintf("subject %s %s truncated=%v, want %s %s truncated=%v", got.Kind, quote(got.Text), got.Truncated, want.Kind, quote(want.Text), want.Truncated))
	}
	if want.Detail != "" && got.Detail != want.Detail {
		bad = append(bad, "subject detail "+quote(got.Detail)+", want "+quote(want.Detail))
	}
	return bad
}

func quote(s string) string { return "«" + s + "»" }

// TestCorpus classifies every capture with its agent's manifest: states,
// outcomes, questions and options must be as recorded; no false blocked.
func TestCorpus(t *testing.T) {
	fullCorpus(t) // a subset other than smoke stops here
	set := loadSet(t)
	corpus := loadCorpus(t)
	if len(corpus) == 0 {
		t.Fatal("no captures under fixtures/")
	}
	for _, c := range corpus {
		name := c.Agent + "/" + strings.TrimSuffix(strings.TrimPrefix(c.Path, fixtureRoot+"/"+c.Agent+"/"), ".raw")
		t.Run(name, func(t *testing.T) {
			m, ok := set.Lookup(c.Agent)
			if !ok {
				t.Fatalf("no manifest for agent %q", c.Agent)
			}
			sc := c.screen(t)
			v := m.Classify(sc)
			bad := c.check(v)
			if c.misdetected {
				if len(bad) == 0 {
					t.Errorf("known misdetection now classifies right: move it back to %s/ and delete its note", c.State)
				}
				return
			}
			for _, b := range bad {
				t.Error(b)
			}
			if len(bad) > 0 {
				t.Logf("screen:\n%s", sc.Text())
			}
			if id := set.Identify(sc); id.Name != c.Agent {
				t.Errorf("identified as %q from the screen, want %q", id.Name, c.Agent)
			}
		})
	}
}

// TestCorpusSmokeSubset, for a smoke recording only: every agent of the
// committed corpus was recorded, and its captures include what the smoke
// subset promises (fixtures/record's TestSmokeSubset holds the scenario
// files to it): a blocked screen where the agent has one, an error where it
// has one, and a turn labelled done where the agent labels finished turns
// done (Gemini's and Pi's read idle). TestCorpus classifies them.
func TestCorpusSmokeSubset(t *testing.T) {
	if fullCorpus(t) {
		t.Skip("a full corpus: TestCorpus and TestEveryRuleHasACapture check it all")
	}
	type states struct{ blocked, completed, error, any bool }
	byAgent := func(cs []capture) map[string]*states {
		m := map[string]*states{}
		for _, c := range cs {
			if c.misdetected {
				continue
			}
			s := m[c.Agent]
			if s == nil {
				s = &states{}
				m[c.Agent] = s
			}
			s.any = true
			switch c.State {
			case detect.StateBlocked:
				s.blocked = true
			case detect.StateDone:
				s.completed = s.completed || c.Outcome == "completed"
			case detect.StateError:
				s.error = true
			}
		}
		return m
	}
	committed, smoke := byAgent(loadCorpusFrom(t, committedRoot)), byAgent(loadCorpus(t))
	var names []string
	for name := range committed {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want, got := committed[name], smoke[name]
		switch {
		case got == nil:
			t.Errorf("%s: no capture in the smoke recording", name)
		case want.blocked && !got.blocked:
			t.Errorf("%s: no blocked capture in the smoke recording", name)
		case want.error && !got.error:
			t.Errorf("%s: no error capture in the smoke recording", name)
		case want.completed && !got.completed:
			t.Errorf("%s: no finished turn (done, completed) in the smoke recording", name)
		}
	}
}

// TestEveryRuleHasACapture fails for a rule that no capture exercises: an
// untested rule is a guess. A smoke recording exercises only some.
func TestEveryRuleHasACapture(t *testing.T) {
	if !fullCorpus(t) {
		t.Skip("AGENTD_FIXTURES_SUBSET=smoke: a smoke recording exercises only some rules; the committed corpus is held to all")
	}
	set := loadSet(t)
	used := map[string]bool{}
	generic, _ := set.Lookup(detect.Generic)
	for _, c := range loadCorpus(t) {
		if c.misdetected {
			continue
		}
		m, ok := set.Lookup(c.Agent)
		if !ok {
			continue
		}
		sc := c.screen(t)
		v := m.Classify(sc)
		used[v.Reason] = true
		if v.Prompt != nil && v.Prompt.Subject != nil {
			used[m.Name+"."+v.Prompt.Subject.Reader()] = true
		}
		// The generic rules stand in for agents without a manifest, so a
		// real agent's blocked screen that they catch exercises them too.
		if c.State == detect.StateBlocked {
			used[generic.Classify(sc).Reason] = true
		}
	}
	var missing []string
	for _, m := range set.Manifests() {
		if m.Extends != "" {
			continue // its rules are the base manifest's, checked there
		}
		for _, r := range m.Rules {
			if !used[m.Name+"."+r.ID] {
				missing = append(missing, "rule "+m.Name+"."+r.ID+" is matched by no capture")
			}
		}
		for name, p := range m.Prompts {
			for i := range p.Subject {
				if id := fmt.Sprintf("%s.%s.subject[%d]", m.Name, name, i+1); !used[id] {
					missing = append(missing, "subject reader "+id+" reads no capture's subject")
				}
			}
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Error(m)
	}
}

// TestNoFalseBlocked counts blocked verdicts on captures labelled otherwise,
// across every manifest: a prompt that is not there is the costliest error.
func TestNoFalseBlocked(t *testing.T) {
	set := loadSet(t)
	for _, c := range loadCorpus(t) {
		if c.State == detect.StateBlocked {
			continue
		}
		sc := c.screen(t)
		m, ok := set.Lookup(c.Agent)
		if !ok {
			continue
		}
		if v := m.Classify(sc); v.State == detect.StateBlocked && !c.misdetected {
			t.Errorf("%s: false blocked by %s", c.Path, v.Reason)
		}
		if g, _ := set.Lookup(detect.Generic); g != nil {
			if v := g.Classify(sc); v.State == detect.StateBlocked {
				t.Errorf("%s: the generic rules call a %s screen blocked (%s)", c.Path, c.State, v.Reason)
			}
		}
	}
}

// keyInBrackets is a one-letter key hint in brackets inside a word.
var keyInBrackets = regexp.MustCompile(`\[(\w)\]|\((\w)\)`)

// TestOptionsComeFromTheMenu fails if any capture's option list holds a row
// from above its question: a numbered list there (a plan's steps, an
// answer) is prose, and answering it would type another option's key.
func TestOptionsComeFromTheMenu(t *testing.T) {
	set := loadSet(t)
	// lastRow is the bottom-most screen row holding s, or -1.
	lastRow := func(lines []string, s string) int {
		for i := len(lines) - 1; i >= 0; i-- {
			if strings.Contains(lines[i], s) {
				return i
			}
		}
		return -1
	}
	// head is what a row shows of text, whose end may wrap onto the next.
	head := func(text string) string {
		r := []rune(text)
		if len(r) > 16 {
			r = r[:16]
		}
		return string(r)
	}
	// The question's row: the last that holds its first words and is no
	// option's ("Sign in with Letta for …" over "> Sign in with Letta
	// (default)"); else the last that holds its last word (a long question
	// wraps on a small screen).
	questionRow := func(lines []string, p *detect.Prompt) int {
		for i := len(lines) - 1; i >= 0; i-- {
			if !strings.Contains(lines[i], head(p.Question)) {
				continue
			}
			option := false
			for _, o := range p.Options {
				option = option || strings.Contains(lines[i], o.Label)
			}
			if !option {
				return i
			}
		}
		f := strings.Fields(p.Question)
		return lastRow(lines, f[len(f)-1])
	}
	checked := 0
	for _, c := range loadCorpus(t) {
		if c.misdetected || c.State != detect.StateBlocked {
			continue
		}
		m, ok := set.Lookup(c.Agent)
		if !ok {
			continue
		}
		sc := c.screen(t)
		v := m.Classify(sc)
		if v.Prompt == nil || v.Prompt.Question == "" || len(v.Prompt.Options) == 0 {
			continue
		}
		q := questionRow(sc.Lines, v.Prompt)
		if q < 0 {
			t.Errorf("%s: question %q is not on screen", c.Path, v.Prompt.Question)
			continue
		}
		// A label read from "[A]llow" is "Allow": find it with the key
		// hints' brackets dropped.
		unbracketed := make([]string, len(sc.Lines))
		for i, l := range sc.Lines {
			unbracketed[i] = keyInBrackets.ReplaceAllString(l, "$1$2")
		}
		for _, o := range v.Prompt.Options {
			if row := lastRow(unbracketed, head(o.Label)); row < q {
				t.Errorf("%s: option %q (row %d) is above the question %q (row %d)", c.Path, o.Label, row, v.Prompt.Question, q)
			}
		}
		checked++
	}
	// A full corpus has well over 50; a smoke recording a few.
	if fullCorpus(t) && checked < 50 || checked == 0 {
		t.Errorf("checked only %d captures' options", checked)
	}
	t.Logf("%d captures: every option at or below its question", checked)
}

// TestCaptureVersionsListed: every version the committed corpus holds for
// an agent is one its manifest claims (versions = [...]), and every claimed
// version has captures, so the list says what the rules are tested on.
func TestCaptureVersionsListed(t *testing.T) {
	set := loadSet(t)
	have := map[string]map[string]bool{}
	for _, c := range loadCorpusFrom(t, committedRoot) {
		if have[c.Agent] == nil {
			have[c.Agent] = map[string]bool{}
		}
		have[c.Agent][c.Version] = true
	}
	for agent, versions := range have {
		m, ok := set.Lookup(agent)
		if !ok {
			continue // TestCorpus reports it
		}
		claimed := map[string]bool{}
		for _, v := range m.Versions {
			claimed[v] = true
			if !versions[v] {
				t.Errorf("%s: the manifest claims version %s, which has no captures", agent, v)
			}
		}
		for v := range versions {
			if !claimed[v] {
				t.Errorf("%s: captures of version %s, which the manifest's versions do not list", agent, v)
			}
		}
	}
}

package detect

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Limits the loader enforces, so a manifest cannot make classification slow.
// RE2 is linear in the input; these keep the constant small.
const (
	MaxRules         = 128
	MaxRegions       = 32
	MaxPrompts       = 32
	MaxPatternLength = 512
	MaxPatterns      = 16 // per match / unless list
)

// DefaultSettle is how long a prompt must have been on screen before agentd
// types an answer, when its manifest does not say: the real Claude Code and
// Codex both dropped a digit typed the moment their menu appeared, and no
// person answers faster than this.
const DefaultSettle = 200 * time.Millisecond

// States a rule may decide.
const (
	StateWorking = "working"
	StateBlocked = "blocked"
	StateIdle    = "idle"
	StateDone    = "done"
	StateError   = "error"
)

var ruleStates = map[string]bool{StateWorking: true, StateBlocked: true, StateIdle: true, StateDone: true, StateError: true}
var outcomes = map[string]bool{"completed": true, "interrupted": true, "failed": true, "unknown": true}
var promptKinds = map[string]bool{"permission": true, "question": true, "trust": true, "auth": true, "confirm": true}

// Manifest is one agent's detection rules, loaded from TOML.
type Manifest struct {
	Name     string   `toml:"name"`
	Display  string   `toml:"display"`
	Versions []string `toml:"versions"`
	// Extends names a manifest whose regions, rules and prompts this one
	// uses when it has no rules of its own (agents known only by name).
	Extends  string                   `toml:"extends"`
	Identify Identify                 `toml:"identify"`
	Regions  []Region                 `toml:"region"`
	Rules    []Rule                   `toml:"rule"`
	Prompts  map[string]*PromptParser `toml:"prompt"`
	Input    Input                    `toml:"input"`
	Reports  Reports                  `toml:"reports"`

	// Source names where the manifest came from (embedded or a file path).
	Source string `toml:"-"`

	regions map[string]*Region
	// What a verdict of these rules outlasts (steady.go, prepareReuse):
	// ruleAt finds a verdict's rule by its reason, and folds[i] is the
	// spinner glyphs rules[0..i] cannot tell apart.
	ruleAt map[string]int
	folds  []*spinnerFold
}

// Identify says how to recognise the agent.
type Identify struct {
	// Process names (comm or argv[0] base name) that mean this agent.
	Process []string `toml:"process"`
	// Argv substrings that mean this agent inside a wrapper (node, npx, bun).
	Argv []string `toml:"argv"`
	// Title and Screen patterns recognise the agent from what it draws.
	Title  []string `toml:"title"`
	Screen []string `toml:"screen"`
	// Shell: the program is a shell. agentd follows what runs in its
	// foreground and classifies with that agent's rules until the shell
	// is back; a shell is never itself the agent found in another shell.
	Shell bool `toml:"shell"`

	title, screen []pattern
}

// Reports says what the agent tells of itself besides its screen. Each
// names a kind that agentd has a reader for (the sessions package), so a
// user's manifest can turn one on for an agent agentd never heard of.
type Reports struct {
	// Hooks: how agentd gives the agent hooks for one launch, whose
	// commands run `agentd report EVENT`. HooksClaudeSettings: Claude
	// Code's --settings layer.
	Hooks string `toml:"hooks"`
	// Log: the agent's own log, read for the turn's events.
	// LogCodexRollout: Codex's rollout file under $CODEX_HOME/sessions.
	Log string `toml:"log"`
}

// The kinds of Reports agentd reads.
const (
	HooksClaudeSettings = "claude-settings"
	LogCodexRollout     = "codex-rollout"
)

// Input says how the agent takes typed text.
type Input struct {
	// BracketedPaste false: send text unwrapped even when the agent turned
	// bracketed paste on (Grok CLI does, then takes the markers as text).
	BracketedPaste *bool `toml:"bracketed_paste"`
	// Raw: the agent reads its keys raw, so a ready screen drawn while its
	// terminal is still in line mode is not ready yet (Grok CLI draws its
	// composer before it switches, and what is typed then is lost). A
	// program that reads whole lines leaves this off.
	Raw bool `toml:"raw"`
	// ReadyAfter: with Raw, the ready screen must also have been up this
	// long after the terminal left line mode (Grok CLI attaches its key
	// handler a moment after it switches, and drops what comes before).
	ReadyAfter string `toml:"ready_after"`
	// SubmitAfter: the Enter that submits sent text waits this long after
	// the text (default 30ms): an agent that takes an Enter soon after a
	// burst of typed text as a new line in a paste (Continue CLI) needs
	// more.
	SubmitAfter string `toml:"submit_after"`

	readyAfter, submitAfter time.Duration
}

// SubmitDelay is how long the Enter that submits sent text waits after it.
func (in Input) SubmitDelay() time.Duration {
	if in.submitAfter > 0 {
		return in.submitAfter
	}
	return 30 * time.Millisecond
}

// ReadyDelay is how long after its terminal left line mode a Raw agent's
// ready screen starts to count.
func (in Input) ReadyDelay() time.Duration { return in.readyAfter }

// PasteBracketed reports whether text sent to the agent may be wrapped in
// bracketed-paste markers when the agent asked for them.
func (m *Manifest) PasteBracketed() bool {
	return m.Input.BracketedPaste == nil || *m.Input.BracketedPaste
}

// Region is a named part of the screen a rule looks at.
type Region struct {
	Name string `toml:"name"`
	// Source is "screen" (default), "title" (the OSC 0/2 title) or
	// "progress" (the OSC 9;4 report as one row: "none", "normal 40",
	// "error 0", "indeterminate 0" or "paused 0").
	Source string `toml:"source"`
	// Bottom keeps the rows from the Bottom-th non-empty row from the end
	// down to the last row (0 keeps the whole screen).
	Bottom int `toml:"bottom"`
	// After starts the region below the last row matching it (within Bottom).
	After string `toml:"after"`
	// Before ends the region above the first row matching it (after After).
	Before string `toml:"before"`
	// Sidebar, on a screen wider than SidebarWider columns, is the width
	// of a sidebar the agent draws at the right of every row: where every
	// row of the screen is blank in its first two columns (its margin),
	// those columns and the rest of each row are left out before the
	// region is chosen, so the sidebar's words never join a row's text.
	Sidebar      int `toml:"sidebar"`
	SidebarWider int `toml:"sidebar_wider"`

	after, before *regexp.Regexp
}

// Rule decides a state when all its patterns match its region.
type Rule struct {
	ID      string   `toml:"id"`
	State   string   `toml:"state"`
	Outcome string   `toml:"outcome"`
	Region  string   `toml:"region"`
	Match   []string `toml:"match"`
	Unless  []string `toml:"unless"`
	// Also lists further conditions on other regions; all must hold.
	Also []Condition `toml:"also"`
	// AltScreen, when set, requires the alternate screen to be on or off.
	AltScreen *bool `toml:"alt_screen"`
	// Prompt names the parser that extracts the prompt of a blocked rule.
	Prompt string `toml:"prompt"`
	// Background, on a working rule: the agent's own turn has stopped but
	// work it started runs on (Claude Code waiting on a background agent),
	// so a report that the turn ended does not end it (Verdict.Background).
	Background bool `toml:"background"`

	cond Condition
	line int
}

// Condition is a set of patterns over one region.
type Condition struct {
	Region string   `toml:"region"`
	Match  []string `toml:"match"`
	Unless []string `toml:"unless"`

	match, unless []pattern
}

// PromptParser extracts a prompt's question and options from a region.
type PromptParser struct {
	Kind   string `toml:"kind"`
	Region string `toml:"region"`
	// Question matches the row that asks; its first capture group (or the
	// whole match) is the question. The last match above the first option
	// wins, else the first match anywhere in the region.
	Question string `toml:"question"`
	// Option matches one option; several may match on one row. Named
	// groups: label (required), id, key, description, selected.
	Option string `toml:"option"`
	// Continuation matches a row that continues the previous option's label
	// (a label wrapped on a narrow terminal).
	Continuation string `toml:"continuation"`
	// Keys is the answer template, see keys.go.
	Keys string `toml:"keys"`
	// Reject marks options whose label matches as rejecting (kind "reject").
	Reject   string `toml:"reject"`
	Freeform bool   `toml:"freeform"`
	// Settle is how long the prompt must have been on screen before the
	// agent takes keys for it (Codex drops keys that come sooner).
	Settle string `toml:"settle"`
	// KeyGap, when set, types an answer's keys one at a time this far
	// apart: for an agent that drops keys arriving in one read (Grok CLI
	// takes "down, down, Enter" written at once as nothing). Where the
	// selection shows, each arrow also waits for the last to show
	// (Prompt.Stepped).
	KeyGap string `toml:"key_gap"`
	// SelectedStyle marks the selected option by how its label looks,
	// for menus that show the selection by colour alone: "reverse",
	// "background", "foreground", "bold" or "underline" (several with
	// commas; any of them counts). The option most of whose label has it
	// is the selected one.
	SelectedStyle string `toml:"selected_style"`
	// Subject reads what the prompt asks to approve ([[prompt.NAME.subject]],
	// tried in order; subject.go).
	Subject []SubjectReader `toml:"subject"`
	// SubjectRequired: every prompt of this parser shows a subject, so
	// when no reader finds one (its head scrolled off, or a layout not
	// seen before), the prompt says it could not be read (kind other,
	// truncated) instead of saying nothing.
	SubjectRequired bool `toml:"subject_required"`
	// HeadFirst: the region holds this prompt alone, its head at the top,
	// so the question and each subject reader's When row are the first
	// rows that match, not the last: free text in the prompt's body (a
	// script's "# comment", a line made to look like the head) cannot pass
	// for them.
	HeadFirst bool `toml:"head_first"`

	question, option, continuation, reject *regexp.Regexp
	settle, keyGap                         time.Duration
	selectedStyle                          byte
	line                                   int
	name                                   string
}

// styleNames are the names selected_style takes, with their Style bits.
var styleNames = map[string]byte{
	"reverse": StyleReverse, "background": StyleBackground, "foreground": StyleForeground,
	"bold": StyleBold, "underline": StyleUnderline,
}

// LoadError is a manifest problem with its place.
type LoadError struct {
	File string
	Line int
	Rule string // rule or prompt id, when the problem is in one
	Msg  string
}

func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Rule != "" {
		fmt.Fprintf(&b, "%s: ", e.Rule)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ParseManifest reads and checks one manifest. file names it in errors.
func ParseManifest(file string, data []byte) (*Manifest, error) {
	var m Manifest
	md, err := toml.Decode(string(data), &m)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &LoadError{File: file, Line: pe.Position.Line, Msg: pe.Message}
		}
		return nil, &LoadError{File: file, Msg: err.Error()}
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, &LoadError{File: file, Line: lineOfKey(data, und[0]), Msg: fmt.Sprintf("unknown key %q", und[0].String())}
	}
	m.Source = file
	if err := m.compile(file, data); err != nil {
		return nil, err
	}
	return &m, nil
}

func (m *Manifest) compile(file string, data []byte) error {
	errAt := func(line int, id, format string, args ...any) error {
		return &LoadError{File: file, Line: line, Rule: id, Msg: fmt.Sprintf(format, args...)}
	}
	if m.Name == "" {
		return errAt(0, "", "missing name")
	}
	m.Input.readyAfter = 0
	if m.Input.ReadyAfter != "" {
		d, err := time.ParseDuration(m.Input.ReadyAfter)
		if err != nil || d < 0 || d > 10*time.Second {
			return errAt(lineOf(data, "ready_after", 0), "", "input.ready_after %q: want a duration from 0 to 10s, such as \"1s\"", m.Input.ReadyAfter)
		}
		m.Input.readyAfter = d
	}
	m.Input.submitAfter = 0
	if m.Input.SubmitAfter != "" {
		d, err := time.ParseDuration(m.Input.SubmitAfter)
		if err != nil || d < 0 || d > 10*time.Second {
			return errAt(lineOf(data, "submit_after", 0), "", "input.submit_after %q: want a duration from 0 to 10s, such as \"1s\"", m.Input.SubmitAfter)
		}
		m.Input.submitAfter = d
	}
	if h := m.Reports.Hooks; h != "" && h != HooksClaudeSettings {
		return errAt(lineOf(data, "hooks", 0), "", "reports.hooks %q: agentd gives hooks of the kind %q only", h, HooksClaudeSettings)
	}
	if l := m.Reports.Log; l != "" && l != LogCodexRollout {
		return errAt(lineOf(data, "log", 0), "", "reports.log %q: agentd reads logs of the kind %q only", l, LogCodexRollout)
	}
	if len(m.Rules) > MaxRules {
		return errAt(0, "", "%d rules, at most %d allowed", len(m.Rules), MaxRules)
	}
	if len(m.Regions) > MaxRegions {
		return errAt(0, "", "%d regions, at most %d allowed", len(m.Regions), MaxRegions)
	}
	if len(m.Prompts) > MaxPrompts {
		return errAt(0, "", "%d prompts, at most %d allowed", len(m.Prompts), MaxPrompts)
	}
	var err error
	if m.Identify.title, err = compileList(m.Identify.Title); err != nil {
		return errAt(lineOf(data, "[identify]", 0), "", "identify title: %v", err)
	}
	if m.Identify.screen, err = compileList(m.Identify.Screen); err != nil {
		return errAt(lineOf(data, "[identify]", 0), "", "identify screen: %v", err)
	}

	regionLines := headerLines(data, "[[region]]")
	m.regions = map[string]*Region{}
	for i := range m.Regions {
		r := &m.Regions[i]
		line := at(regionLines, i)
		id := fmt.Sprintf("region %q", r.Name)
		if r.Name == "" {
			return errAt(line, "", "region without a name")
		}
		if _, dup := m.regions[r.Name]; dup {
			return errAt(line, id, "defined twice")
		}
		switch r.Source {
		case "", "screen", "title", "progress":
		default:
			return errAt(line, id, "source %q: want screen, title or progress", r.Source)
		}
		if r.Bottom < 0 {
			return errAt(line, id, "bottom %d: want 0 or more", r.Bottom)
		}
		if r.Sidebar < 0 || r.SidebarWider < 0 {
			return errAt(line, id, "sidebar %d, sidebar_wider %d: want 0 or more", r.Sidebar, r.SidebarWider)
		}
		if r.after, err = compileRow(r.After); err != nil {
			return errAt(line, id, "after: %v", err)
		}
		if r.before, err = compileRow(r.Before); err != nil {
			return errAt(line, id, "before: %v", err)
		}
		m.regions[r.Name] = r
	}
	checkRegion := func(line int, id, name string) error {
		if name == "" || name == "screen" || name == "title" {
			return nil // built in: the whole screen, the title
		}
		if _, ok := m.regions[name]; !ok {
			return errAt(line, id, "unknown region %q", name)
		}
		return nil
	}

	promptLines := map[string]int{}
	for name, p := range m.Prompts {
		line := lineOf(data, "[prompt."+name+"]", 0)
		promptLines[name] = line
		id := fmt.Sprintf("prompt %q", name)
		p.line, p.name = line, name
		if !promptKinds[p.Kind] {
			return errAt(line, id, "kind %q: want permission, question, trust, auth or confirm", p.Kind)
		}
		if err := checkRegion(line, id, p.Region); err != nil {
			return err
		}
		if p.Option == "" {
			return errAt(line, id, "missing option pattern")
		}
		if p.option, err = compileRow(p.Option); err != nil {
			return errAt(lineOf(data, "option", line), id, "option: %v", err)
		}
		if !hasGroup(p.option, "label") {
			return errAt(lineOf(data, "option", line), id, "option: needs a (?P<label>…) group")
		}
		if p.question, err = compileRow(p.Question); err != nil {
			return errAt(lineOf(data, "question", line), id, "question: %v", err)
		}
		if p.continuation, err = compileRow(p.Continuation); err != nil {
			return errAt(lineOf(data, "continuation", line), id, "continuation: %v", err)
		}
		if p.reject, err = compileRow(p.Reject); err != nil {
			return errAt(lineOf(data, "reject", line), id, "reject: %v", err)
		}
		if p.Keys == "" {
			return errAt(line, id, "missing keys template")
		}
		p.settle = DefaultSettle
		if p.Settle != "" {
			if p.settle, err = time.ParseDuration(p.Settle); err != nil || p.settle < 0 || p.settle > 5*time.Second {
				return errAt(lineOf(data, "settle", line), id, "settle %q: want a duration from 0 to 5s, such as \"250ms\"", p.Settle)
			}
		}
		p.keyGap = 0
		if p.KeyGap != "" {
			if p.keyGap, err = time.ParseDuration(p.KeyGap); err != nil || p.keyGap < 0 || p.keyGap > time.Second {
				return errAt(lineOf(data, "key_gap", line), id, "key_gap %q: want a duration from 0 to 1s, such as \"30ms\"", p.KeyGap)
			}
		}
		if _, err := parseKeys(p.Keys); err != nil {
			return errAt(lineOf(data, "keys", line), id, "keys: %v", err)
		}
		if len(p.Subject) > MaxPatterns {
			return errAt(lineOf(data, "[[prompt."+name+".subject]]", line), id, "%d subject readers, at most %d allowed", len(p.Subject), MaxPatterns)
		}
		subjectLines := headerLines(data, "[[prompt."+name+".subject]]")
		for i := range p.Subject {
			if err := p.Subject[i].compile(); err != nil {
				return errAt(at(subjectLines, i), id, "subject %d: %v", i+1, err)
			}
		}
		p.selectedStyle = 0
		if p.SelectedStyle != "" {
			for _, name := range strings.Split(p.SelectedStyle, ",") {
				bit, ok := styleNames[strings.TrimSpace(name)]
				if !ok {
					return errAt(lineOf(data, "selected_style", line), id, "selected_style %q: want reverse, background, foreground, bold or underline", strings.TrimSpace(name))
				}
				p.selectedStyle |= bit
			}
		}
	}

	ruleLines := headerLines(data, "[[rule]]")
	seen := map[string]bool{}
	sawOther := false
	for i := range m.Rules {
		r := &m.Rules[i]
		line := at(ruleLines, i)
		r.line = line
		id := fmt.Sprintf("rule %q", r.ID)
		if r.ID == "" {
			return errAt(line, "", "rule without an id")
		}
		if seen[r.ID] {
			return errAt(line, id, "id used twice")
		}
		seen[r.ID] = true
		if !ruleStates[r.State] {
			return errAt(line, id, "state %q: want blocked, working, idle, done or error", r.State)
		}
		if r.State == StateBlocked {
			if sawOther {
				return errAt(line, id, "blocked rules must come before all others (a visible blocker always holds)")
			}
			if r.Prompt == "" {
				return errAt(line, id, "a blocked rule needs a prompt parser")
			}
		} else {
			sawOther = true
		}
		if r.Prompt != "" {
			if _, ok := m.Prompts[r.Prompt]; !ok {
				return errAt(line, id, "unknown prompt %q", r.Prompt)
			}
		}
		if r.Outcome != "" && (r.State != StateDone || !outcomes[r.Outcome]) {
			return errAt(line, id, "outcome %q: only done rules have one (completed, interrupted, failed, unknown)", r.Outcome)
		}
		if r.Background && r.State != StateWorking {
			return errAt(line, id, "background: only working rules have it")
		}
		if r.State == StateDone && r.Outcome == "" {
			r.Outcome = "unknown"
		}
		if len(r.Match) == 0 {
			return errAt(line, id, "no match patterns")
		}
		r.cond = Condition{Region: r.Region, Match: r.Match, Unless: r.Unless}
		conds := append([]*Condition{&r.cond}, ptrs(r.Also)...)
		for _, c := range conds {
			if err := checkRegion(line, id, c.Region); err != nil {
				return err
			}
			if len(c.Match) > MaxPatterns || len(c.Unless) > MaxPatterns {
				return errAt(line, id, "more than %d patterns in one list", MaxPatterns)
			}
			if c.match, err = compileList(c.Match); err != nil {
				return errAt(lineOf(data, "match", line), id, "match: %v", err)
			}
			if c.unless, err = compileList(c.Unless); err != nil {
				return errAt(lineOf(data, "unless", line), id, "unless: %v", err)
			}
		}
	}
	m.prepareReuse()
	return nil
}

func ptrs(cs []Condition) []*Condition {
	out := make([]*Condition, len(cs))
	for i := range cs {
		out[i] = &cs[i]
	}
	return out
}

// compileOne compiles a pattern in multi-line mode: ^ and $ match at row ends.
func compileOne(p string) (*regexp.Regexp, error) { return compile("(?m)", p) }

// compileRow compiles a pattern that is only ever matched against one row.
// Without multi-line mode a leading ^ anchors the match at the row's start,
// which lets the regexp package try one position instead of every one;
// on a single row the meaning is the same.
func compileRow(p string) (*regexp.Regexp, error) { return compile("", p) }

func compile(flags, p string) (*regexp.Regexp, error) {
	if p == "" {
		return nil, nil
	}
	if len(p) > MaxPatternLength {
		return nil, fmt.Errorf("pattern of %d bytes, at most %d allowed", len(p), MaxPatternLength)
	}
	re, err := regexp.Compile(flags + p)
	if err != nil {
		// regexp's message repeats the pattern; keep only what is wrong.
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%s", se.Code)
		}
		return nil, err
	}
	return re, nil
}

func compileList(ps []string) ([]pattern, error) {
	out := make([]pattern, 0, len(ps))
	for _, p := range ps {
		re, err := compileOne(p)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", p, err)
		}
		if re != nil {
			out = append(out, newPattern(re))
		}
	}
	return out, nil
}

func hasGroup(re *regexp.Regexp, name string) bool {
	return re.SubexpIndex(name) >= 0
}

// headerLines returns the 1-based line of each occurrence of header.
func headerLines(data []byte, header string) []int {
	var lines []int
	for i, l := range bytes.Split(data, []byte("\n")) {
		if strings.TrimSpace(string(l)) == header {
			lines = append(lines, i+1)
		}
	}
	return lines
}

// lineOf finds the first line at or after from that starts with key.
func lineOf(data []byte, key string, from int) int {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if i+1 < from {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(string(l)), key) {
			return i + 1
		}
	}
	return from
}

func lineOfKey(data []byte, k toml.Key) int {
	if len(k) == 0 {
		return 0
	}
	return lineOf(data, k[len(k)-1], 0)
}

func at(lines []int, i int) int {
	if i < len(lines) {
		return lines[i]
	}
	return 0
}

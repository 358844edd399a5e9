package detect

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"
)

// Verdict is what the screen says the agent is doing.
type Verdict struct {
	Agent   string `json:"agent"`
	State   string `json:"state"`
	Outcome string `json:"outcome,omitempty"`
	// Reason is a stable id: "<agent>.<rule id>", or "<agent>.no_rule".
	Reason   string   `json:"reason"`
	Evidence Evidence `json:"evidence"`
	Prompt   *Prompt  `json:"prompt,omitempty"`
	// Message is an error's own words: group 1 of the error rule's first
	// pattern, where it has one.
	Message string `json:"message,omitempty"`
	// Background: the screen shows work the agent started running on after
	// its own turn stopped (a rule with background = true).
	Background bool `json:"background,omitempty"`
}

// Evidence is the text that decided a verdict and where it was.
type Evidence struct {
	Region string `json:"region,omitempty"`
	Text   string `json:"text,omitempty"`
}

// Prompt is a question on screen waiting for a person.
type Prompt struct {
	// ID is the promptId clients answer. detect sets it to Content; a
	// session makes it name one appearance of the prompt (sessions'
	// machine), so an answer given once never applies to a later one.
	ID       string   `json:"promptId"`
	Kind     string   `json:"kind"`
	Question string   `json:"question"`
	Subject  *Subject `json:"subject,omitempty"`
	Options  []Option `json:"options"`
	Freeform bool     `json:"freeform"`
	// Content fingerprints what a person reads in the prompt (kind,
	// question, subject, options): it changes when the prompt changes and
	// only then.
	Content string `json:"-"`
	// Settle is how long the prompt must have been on screen before keys
	// for it are typed.
	Settle time.Duration `json:"-"`
	// KeyGap, when not 0, is the pause between the keys of an answer.
	KeyGap time.Duration `json:"-"`
	// Stepped: the agent takes its keys one at a time (KeyGap) and its
	// keys move a selection the screen shows, a row per arrow. An answer
	// types each arrow once the screen shows the last one moved it, and
	// Enter once the chosen option is the selected one: under load a fixed
	// gap let two arrows arrive in one read, which the agent dropped.
	Stepped bool `json:"-"`
	// Positional: the keys move a selection from where the prompt starts
	// it, and the screen does not show where it is now. Keys a person typed
	// at the prompt may have moved it.
	Positional bool `json:"-"`
	// unread: a menu is on screen, but its options cannot be told from
	// prose (no question above them), so none are offered.
	unread bool
}

// Option is one answer a prompt offers.
type Option struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	// Kind is "allow" or "reject" when the manifest tells them apart.
	Kind     string `json:"kind,omitempty"`
	Selected bool   `json:"selected,omitempty"`
	// Keys are the bytes that choose this option; empty when the manifest
	// cannot say, and then agentd must not answer with it.
	Keys string `json:"-"`
}

// Unmatched reports whether no rule matched (the verdict is the default idle).
func (v Verdict) Unmatched() bool { return strings.HasSuffix(v.Reason, ".no_rule") }

// HasIdleRule reports whether the manifest can recognise its agent waiting
// for a task, rather than only falling back to idle.
func (m *Manifest) HasIdleRule() bool {
	for _, r := range m.Rules {
		if r.State == StateIdle {
			return true
		}
	}
	return false
}

// Option returns the option with the given id.
func (p *Prompt) Option(id string) (Option, bool) {
	for _, o := range p.Options {
		if o.ID == id {
			return o, true
		}
	}
	return Option{}, false
}

// Classify decides the agent's state from one screen.
func (m *Manifest) Classify(s Screen) Verdict {
	return m.evaluate(s, nil)
}

// RuleTrace is one rule's outcome in an explanation.
type RuleTrace struct {
	ID      string
	State   string
	Matched bool
	// Text is what the first pattern matched; Why says what failed.
	Text string
	Why  string
}

// Explanation is a verdict with every region's text and every rule tried.
type Explanation struct {
	Verdict Verdict
	Regions []RegionText
	Rules   []RuleTrace
}

// RegionText is the text a region selected.
type RegionText struct {
	Name string
	Text string
}

// Explain classifies s and records why.
func (m *Manifest) Explain(s Screen) Explanation {
	var ex Explanation
	ex.Verdict = m.evaluate(s, &ex)
	names := []string{"title"}
	for _, r := range m.Regions {
		names = append(names, r.Name)
	}
	rc := m.newRegionCache(s)
	for _, n := range names {
		ex.Regions = append(ex.Regions, RegionText{Name: n, Text: rc.text(n)})
	}
	return ex
}

func (m *Manifest) evaluate(s Screen, ex *Explanation) Verdict {
	v := m.evaluateRules(s, ex)
	if v.State != StateIdle {
		return v
	}
	// The rules saw nothing, or only a composer: the generic reader looks
	// for what no rule was written for (generic.go).
	g, ok := readGeneric(m.Name, s)
	if ex != nil {
		t := RuleTrace{ID: "(generic reader)", Why: "no menu, entry field, error or retry at the bottom"}
		if ok {
			t = RuleTrace{ID: "(generic reader)", State: g.State, Matched: true, Text: g.Evidence.Text}
		}
		ex.Rules = append(ex.Rules, t)
	}
	if ok {
		return g
	}
	return v
}

func (m *Manifest) evaluateRules(s Screen, ex *Explanation) Verdict {
	rc := m.newRegionCache(s)
	for i := range m.Rules {
		r := &m.Rules[i]
		ok, text, why := m.ruleMatches(r, s, rc)
		if ex != nil {
			ex.Rules = append(ex.Rules, RuleTrace{ID: r.ID, State: r.State, Matched: ok, Text: text, Why: why})
		}
		if !ok {
			continue
		}
		v := Verdict{
			Agent:      m.Name,
			State:      r.State,
			Outcome:    r.Outcome,
			Reason:     m.Name + "." + r.ID,
			Evidence:   Evidence{Region: regionName(r.cond.Region), Text: text},
			Background: r.Background,
		}
		if r.State == StateError && len(r.cond.match) > 0 {
			if m := r.cond.match[0].re.FindStringSubmatch(text); len(m) > 1 {
				v.Message = strings.TrimSpace(m[1])
			}
		}
		if r.Prompt != "" {
			p := m.Prompts[r.Prompt]
			region := p.regionOr(r.cond.Region)
			v.Prompt = p.extract(rc.rows(region), rc.styles(region), s.Cols)
			if v.State == StateBlocked && len(v.Prompt.Options) == 0 && !v.Prompt.unread {
				// A blocker with no menu at all is not one we can claim: a
				// false "needs you" costs more than a late one. (A menu whose
				// options cannot be read for sure is claimed, with none.)
				if ex != nil {
					ex.Rules[len(ex.Rules)-1].Matched = false
					ex.Rules[len(ex.Rules)-1].Why = "prompt parser found no options"
				}
				continue
			}
		}
		return v
	}
	return Verdict{Agent: m.Name, State: StateIdle, Reason: m.Name + ".no_rule"}
}

func (m *Manifest) ruleMatches(r *Rule, s Screen, rc *regionCache) (ok bool, text, why string) {
	if r.AltScreen != nil && *r.AltScreen != s.AltScreen {
		return false, "", "alternate screen is not as required"
	}
	ok, text, why = rc.holds(&r.cond)
	if !ok {
		return false, "", why
	}
	for i := range r.Also {
		if ok2, _, why2 := rc.holds(&r.Also[i]); !ok2 {
			return false, "", why2
		}
	}
	return true, text, ""
}

func regionName(n string) string {
	if n == "" {
		return "screen"
	}
	return n
}

// regionCache computes each region's rows, and their text, once per
// classification: every rule on a region reads the same text.
type regionCache struct {
	m     *Manifest
	s     Screen
	cache map[string][]string
	texts map[string]string
}

func (m *Manifest) newRegionCache(s Screen) *regionCache {
	return &regionCache{m: m, s: s}
}

func (rc *regionCache) rows(name string) []string {
	name = regionName(name)
	if rows, ok := rc.cache[name]; ok {
		return rows
	}
	var rows []string
	switch name {
	case "screen":
		rows = rc.s.Lines
	case "title":
		rows = []string{rc.s.Title}
	default:
		rows = rc.m.regions[name].rows(rc.s)
	}
	if rc.cache == nil {
		rc.cache = make(map[string][]string, 4)
	}
	rc.cache[name] = rows
	return rows
}

// styles returns the Style bytes of a region's rows (aligned with rows),
// or nil when the screen has none or the region is no rows of it.
func (rc *regionCache) styles(name string) []string {
	name = regionName(name)
	if len(rc.s.Styles) != len(rc.s.Lines) {
		return nil
	}
	switch name {
	case "screen":
		return rc.s.Styles
	case "title":
		return nil
	}
	r := rc.m.regions[name]
	if r.Source == "title" || r.Source == "progress" {
		return nil
	}
	s := r.withoutSidebar(rc.s)
	start, end := r.bounds(s)
	return s.Styles[start:end]
}

func (rc *regionCache) text(name string) string {
	name = regionName(name)
	if t, ok := rc.texts[name]; ok {
		return t
	}
	t := strings.Join(rc.rows(name), "\n")
	if rc.texts == nil {
		rc.texts = make(map[string]string, 4)
	}
	rc.texts[name] = t
	return t
}

func (rc *regionCache) holds(c *Condition) (bool, string, string) {
	text := rc.text(c.Region)
	first := ""
	for i, re := range c.match {
		loc := re.FindStringIndex(text)
		if loc == nil {
			return false, "", "no match for " + quote(c.Match[i])
		}
		if i == 0 {
			first = text[loc[0]:loc[1]]
		}
	}
	for i, re := range c.unless {
		if re.MatchString(text) {
			return false, "", "unless matched " + quote(c.Unless[i])
		}
	}
	return true, first, ""
}

func quote(s string) string { return "`" + s + "`" }

// rows selects the region's rows from a screen.
func (r *Region) rows(s Screen) []string {
	switch r.Source {
	case "title":
		return []string{s.Title}
	case "progress":
		return []string{s.Progress.String()}
	}
	s = r.withoutSidebar(s)
	start, end := r.bounds(s)
	return s.Lines[start:end]
}

// withoutSidebar is s with the region's sidebar left out of every row
// (and its styles), where the screen has one: wider than SidebarWider,
// with a margin two columns wide between the sidebar and the rest that no
// row writes in (sidebarEdge). The rows are cut before the region is
// chosen, so a row that held only the sidebar's words is empty.
func (r *Region) withoutSidebar(s Screen) Screen {
	if r.Sidebar <= 0 || s.Cols <= r.SidebarWider || s.Cols <= r.Sidebar {
		return s
	}
	col, ok := sidebarEdge(s, s.Cols-r.Sidebar)
	if !ok {
		return s
	}
	lines := make([]string, len(s.Lines))
	var styles []string
	if len(s.Styles) == len(s.Lines) {
		styles = make([]string, len(s.Lines))
	}
	for i, row := range s.Lines {
		lines[i] = strings.TrimRight(cutAt(row, col), " ")
		if styles != nil {
			styles[i] = s.Styles[i][:min(utf8.RuneCountInString(lines[i]), len(s.Styles[i]))]
		}
	}
	s.Lines, s.Styles = lines, styles
	return s
}

// sidebarSlack is how far from where the manifest puts it a sidebar's
// margin is looked for: a release may draw its sidebar a little wider or
// narrower, or a card in it with its border in the margin.
const sidebarSlack = 4

// sidebarEdge finds the column where a sidebar expected at col begins: the
// nearest to col whose two columns every row leaves blank, or holds only a
// box's upright border in (a card drawn in the sidebar, OpenCode's
// "Getting started", may put its edge there). ok is false where none is,
// as where no sidebar is drawn and the rows run across: a menu's hints do.
func sidebarEdge(s Screen, col int) (int, bool) {
	for off := 0; off <= sidebarSlack; off++ {
		for _, c := range []int{col - off, col + off}[:min(off+1, 2)] {
			if c > 0 && c+2 <= s.Cols && marginClear(s.Lines, c) {
				return c, true
			}
		}
	}
	return 0, false
}

// marginClear says every row is blank, or an upright box border, in
// columns c and c+1.
func marginClear(lines []string, c int) bool {
	for _, row := range lines {
		head := cutAt(row, c)
		for _, g := range cutAt(row[len(head):], 2) {
			if g != ' ' && !strings.ContainsRune(uprightBorders, g) {
				return false
			}
		}
	}
	return true
}

// uprightBorders are the glyphs of a box's left or right edge.
const uprightBorders = "│┃║╭╰┌└├╮╯┐┘┤"

// cutAt is row up to column col: the glyphs that start left of it.
func cutAt(row string, col int) string {
	w := 0
	for i, c := range row {
		if w >= col {
			return row[:i]
		}
		w += runeWidth(c)
	}
	return row
}

// runeWidth is how many columns c takes on a terminal: 2 for East Asian
// wide and emoji glyphs, else 1 (near enough the emulator's go-runewidth
// for telling where a column is).
func runeWidth(c rune) int {
	switch {
	case c >= 0x1100 && c <= 0x115f, c >= 0x2e80 && c <= 0xa4cf && c != 0x303f,
		c >= 0xac00 && c <= 0xd7a3, c >= 0xf900 && c <= 0xfaff, c >= 0xfe30 && c <= 0xfe4f,
		c >= 0xff00 && c <= 0xff60, c >= 0xffe0 && c <= 0xffe6, c >= 0x1f300 && c <= 0x1f64f,
		c >= 0x1f900 && c <= 0x1f9ff, c >= 0x20000 && c <= 0x3fffd:
		return 2
	}
	return 1
}

// bounds is where the region's rows are in s.Lines.
func (r *Region) bounds(s Screen) (start, end int) {
	lines := s.Lines
	if r.Bottom > 0 {
		seen := 0
		start = len(lines)
		for i := len(lines) - 1; i >= 0 && seen < r.Bottom; i-- {
			if strings.TrimSpace(lines[i]) != "" {
				seen++
				start = i
			}
		}
	}
	end = len(lines)
	for end > start && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	if r.after != nil {
		for i := end - 1; i >= start; i-- {
			if r.after.MatchString(lines[i]) {
				start = i + 1
				break
			}
		}
	}
	if r.before != nil {
		for i := start; i < end; i++ {
			if r.before.MatchString(lines[i]) {
				end = i
				break
			}
		}
	}
	return start, end
}

func (p *PromptParser) regionOr(def string) string {
	if p.Region != "" {
		return p.Region
	}
	return def
}

// labelWithoutKeyBrackets is the option's label matched by m on row. A key
// hint drawn inside the label in brackets, "[A]llow" or "(y)es", is read
// as the word alone ("Allow", "yes"): the key stays the key group's.
func labelWithoutKeyBrackets(row string, m []int, labelIdx, keyIdx int) string {
	if labelIdx < 0 || m[2*labelIdx] < 0 {
		return ""
	}
	from, to := m[2*labelIdx], m[2*labelIdx+1]
	label := row[from:to]
	if keyIdx >= 0 && m[2*keyIdx] > from && m[2*keyIdx+1] < to {
		kf, kt := m[2*keyIdx], m[2*keyIdx+1]
		open, close := row[kf-1], row[kt]
		if (open == '[' && close == ']') || (open == '(' && close == ')') {
			label = row[from:kf-1] + row[kf:kt] + row[kt+1:to]
		}
	}
	return strings.TrimSpace(label)
}

// extract reads the prompt's options and question from the region's rows,
// on a screen cols wide (0: unknown). styles are the rows' Style bytes, or
// nil when the screen has none.
func (p *PromptParser) extract(rows, styles []string, cols int) *Prompt {
	pr := &Prompt{Kind: p.Kind, Freeform: p.Freeform, Settle: p.settle, KeyGap: p.keyGap}
	lastOptionRow := -2
	labelIdx := p.option.SubexpIndex("label")
	idIdx := p.option.SubexpIndex("id")
	keyIdx := p.option.SubexpIndex("key")
	descIdx := p.option.SubexpIndex("description")
	selIdx := p.option.SubexpIndex("selected")
	group := func(row string, m []int, idx int) string {
		if idx < 0 || m[2*idx] < 0 {
			return ""
		}
		return strings.TrimSpace(row[m[2*idx]:m[2*idx+1]])
	}
	type found struct {
		opt Option
		key string
		row string // the option's text, continuation rows joined
	}
	parse := func(row string, m []int) found {
		return found{row: row, key: group(row, m, keyIdx), opt: Option{
			Label:       labelWithoutKeyBrackets(row, m, labelIdx, keyIdx),
			ID:          group(row, m, idIdx),
			Description: group(row, m, descIdx),
			Selected:    group(row, m, selIdx) != "",
		}}
	}
	// styled tells whether most of the label matched by m on row i looks
	// as selected_style says the selection does.
	styled := func(i int, m []int) bool {
		if p.selectedStyle == 0 || i >= len(styles) || labelIdx < 0 || m[2*labelIdx] < 0 {
			return false
		}
		row, st := rows[i], styles[i]
		from := utf8.RuneCountInString(row[:m[2*labelIdx]])
		to := from + utf8.RuneCountInString(row[m[2*labelIdx]:m[2*labelIdx+1]])
		n := 0
		for g := from; g < to && g < len(st); g++ {
			if st[g]&p.selectedStyle != 0 {
				n++
			}
		}
		return to > from && 2*n > to-from
	}
	// The live menu is the block between the question and the last option
	// row: a numbered list above the question (a plan's steps, a turn's
	// answer) is prose, and reading it as options would type the wrong key.
	// Where the parser knows its question and none stands above the last
	// option, the options cannot be told from prose, and there are none.
	first, qRow := 0, -1
	if p.question != nil {
		var inline bool
		qRow, inline = p.questionRow(rows)
		if qRow < 0 {
			// Blocked all the same where the rule says so, but with free
			// text and the terminal only: no key is typed for a guess.
			pr.Question = p.findQuestion(rows)
			pr.Freeform, pr.unread = true, true
			pr.Seal()
			return pr
		}
		first = qRow + 1
		if inline {
			first = qRow
		}
	}
	var opts []found
	lastRowOptions, menu := 0, len(rows)
	for i := first; i < len(rows); i++ {
		row := rows[i]
		ms := p.option.FindAllStringSubmatchIndex(row, -1)
		if len(ms) == 0 {
			if p.continuation != nil && lastOptionRow == i-1 && lastRowOptions == 1 && p.continuation.MatchString(row) && wrapped(rows[i-1], row, cols) {
				// A label wrapped on a narrow terminal: read the option again
				// as one row, so a key hint at its end is still a hint.
				last := &opts[len(opts)-1]
				joined := last.row + " " + strings.TrimSpace(row)
				if m := p.option.FindStringSubmatchIndex(joined); m != nil {
					*last = parse(joined, m)
				} else {
					last.opt.Label = strings.TrimSpace(last.opt.Label + " " + strings.TrimSpace(row))
					last.row = joined
				}
				lastOptionRow = i
			}
			continue
		}
		lastOptionRow = i
		lastRowOptions = len(ms)
		menu = min(menu, i)
		for _, m := range ms {
			o := parse(row, m)
			o.opt.Selected = o.opt.Selected || styled(i, m)
			opts = append(opts, o)
		}
	}
	tmpl, _ := parseKeys(p.Keys) // checked when the manifest was loaded
	selected := 0
	for i := range opts {
		if opts[i].opt.Selected {
			selected = i
			break
		}
	}
	for i := range opts {
		o := &opts[i].opt
		if o.ID == "" {
			o.ID = itoa(i + 1)
		}
		if p.reject != nil {
			o.Kind = "allow"
			if p.reject.MatchString(o.Label) {
				o.Kind = "reject"
			}
		}
		o.Keys = tmpl.expand(keyContext{id: o.ID, key: opts[i].key, index: i, count: len(opts), selected: selected})
		pr.Options = append(pr.Options, *o)
	}
	if qRow >= 0 {
		if pr.Question = p.pick(p.wrappedQuestion(rows, qRow, cols)); pr.Question == "" {
			pr.Question = p.pick(rows[qRow])
		}
	}
	anySelected := false
	for _, o := range pr.Options {
		anySelected = anySelected || o.Selected
	}
	pr.Positional = tmpl.positional() && !anySelected
	pr.Subject = p.subject(rows, qRow, menu, cols)
	pr.Stepped = p.keyGap > 0 && anySelected && tmpl.stepsSelection()
	pr.Seal()
	return pr
}

// wrapped tells whether next can be the rest of prev, wrapped at the edge
// of a screen cols wide: its first word would not have fitted on prev's
// row. A hint row under a short option ("shift+tab to approve with this
// feedback") would have, so it is no part of the label.
func wrapped(prev, next string, cols int) bool {
	if cols <= 0 {
		return true
	}
	word, _, _ := strings.Cut(strings.TrimSpace(next), " ")
	return utf8.RuneCountInString(strings.TrimRight(prev, " "))+1+utf8.RuneCountInString(word) > cols
}

// wrappedQuestion is the question row q with the rows above it that it
// was wrapped from on a narrow screen ("… Would you like to" / "proceed?"),
// joined: rows of its paragraph, at its indentation, each too full for the
// next one's first word but not reaching the edge (a row that does is a
// box's, its border in the last column).
func (p *PromptParser) wrappedQuestion(rows []string, q, cols int) string {
	text := rows[q]
	if cols <= 0 || strings.ContainsAny(text, boxRunes) {
		return text
	}
	indent := len(text) - len(strings.TrimLeft(text, " "))
	for i := q - 1; i >= 0; i-- {
		above := rows[i]
		if strings.TrimSpace(above) == "" || p.option.MatchString(above) || strings.ContainsAny(above, boxRunes) ||
			len(above)-len(strings.TrimLeft(above, " ")) != indent ||
			utf8.RuneCountInString(above) >= cols || !wrapped(above, text, cols) {
			break
		}
		text = strings.TrimRight(above, " ") + " " + strings.TrimSpace(text)
	}
	return text
}

// boxRunes draw boxes: a row with them is no wrapped paragraph.
const boxRunes = "│┃╭╮╰╯┌┐└┘├┤"

// pick is the question a row holds, or "": the question group, else the
// first group that matched (so each branch of an alternation can hold its
// own), else the whole match. Runs of spaces read as one: a heading padded
// apart from its page counter ("Tips      1 of 3") is one line of text.
func (p *PromptParser) pick(row string) string {
	m := p.question.FindStringSubmatch(row)
	if m == nil {
		return ""
	}
	q := m[0]
	if i := p.question.SubexpIndex("question"); i > 0 && m[i] != "" {
		q = m[i]
	} else {
		for _, g := range m[1:] {
			if g != "" {
				q = g
				break
			}
		}
	}
	return strings.Join(strings.Fields(q), " ")
}

// questionRow is the row of the question that heads the menu: the nearest
// question row above the last option row, itself no option; else, for a
// prompt that asks and offers on one row ("Overwrite? [y/N]"), the last
// option row when it holds the question too (inline). -1 when there is
// none.
func (p *PromptParser) questionRow(rows []string) (row int, inline bool) {
	last := -1
	for i := len(rows) - 1; i >= 0; i-- {
		if p.option.MatchString(rows[i]) {
			last = i
			break
		}
	}
	if last < 0 {
		return -1, false
	}
	if p.HeadFirst {
		for i := 0; i < last; i++ {
			if !p.option.MatchString(rows[i]) && p.pick(rows[i]) != "" {
				return i, false
			}
		}
	}
	for i := last - 1; i >= 0; i-- {
		if !p.option.MatchString(rows[i]) && p.pick(rows[i]) != "" {
			return i, false
		}
	}
	if p.pick(rows[last]) != "" {
		return last, true
	}
	return -1, false
}

// findQuestion is the first question row in rows, for a prompt whose menu
// could not be read.
func (p *PromptParser) findQuestion(rows []string) string {
	for _, row := range rows {
		if q := p.pick(row); q != "" {
			return q
		}
	}
	return ""
}

// Fingerprint hashes what a person reads in a prompt, nothing else: its
// Content. A subject's runs of white space count as one space, so the same
// command wrapped at another width on a resized screen reads the same.
func Fingerprint(p *Prompt) string {
	h := sha256.New()
	h.Write([]byte(p.Kind))
	h.Write([]byte{0})
	h.Write([]byte(p.Question))
	for _, o := range p.Options {
		h.Write([]byte{0})
		h.Write([]byte(o.ID))
		h.Write([]byte{1})
		h.Write([]byte(o.Label))
	}
	if s := p.Subject; s != nil {
		h.Write([]byte{2})
		h.Write([]byte(s.Kind))
		for _, t := range []string{s.Text, s.Detail} {
			h.Write([]byte{3})
			h.Write([]byte(strings.Join(strings.Fields(t), " ")))
		}
		if s.Truncated {
			h.Write([]byte{4})
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

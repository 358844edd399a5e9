package detect

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Subject is what a prompt asks the person to approve: the command, the
// file and its diff, the URL, the folder, the tool. It is untrusted text
// (a model, a repository or an agent wrote it): Clean has made it inert,
// and every client escapes it for its own medium.
type Subject struct {
	// Kind is one of SubjectKinds.
	Kind string `json:"kind"`
	// Text is one line: the command, path, URL, folder or tool name.
	Text string `json:"text"`
	// Detail is bounded more, in rows: the whole multi-line command, an
	// edit's diff, a fetch's prompt, an MCP tool's arguments.
	Detail string `json:"detail,omitempty"`
	// Truncated: agentd could not see all of it (the agent elided rows,
	// its head scrolled off the screen, or it is longer than agentd keeps).
	Truncated bool `json:"truncated,omitempty"`

	reader string // "<prompt parser>.subject[<n>]" that read it
}

// Reader names the manifest's reader that read the subject, as
// "<prompt>.subject[<n>]" (from 1); "" where none did.
func (s *Subject) Reader() string { return s.reader }

// SubjectKinds are the kinds a subject may have.
var SubjectKinds = map[string]bool{
	"command": true, "edit": true, "write": true, "read": true,
	"fetch": true, "folder": true, "tool": true, "other": true,
}

// Bounds on a subject, so a 10,000-character command cannot flood a
// notification, a phone or a webhook: what is cut is marked Truncated.
const (
	MaxSubjectText       = 300  // runes
	MaxSubjectDetail     = 8192 // bytes
	MaxSubjectDetailRows = 200
)

// SubjectReader reads one kind of subject from a prompt's rows (a manifest's
// [[prompt.NAME.subject]]). The readers of a prompt are tried in order; the
// first whose When row is on screen reads the subject.
type SubjectReader struct {
	Kind string `toml:"kind"`
	// When matches the row that says this reader applies ("Bash command",
	// "Would you like to run the following command?"): the last such row
	// above the menu (the first with the parser's HeadFirst). Reading
	// starts there.
	When string `toml:"when"`
	// Text matches the row holding the one-line text, searched from the
	// When row down to the menu; its group "text" (else its first group,
	// else the whole match) is the text. Without it the text is the detail
	// on one line.
	Text string `toml:"text"`
	// TextMore matches a row below the text's row that goes on with it
	// (a multi-line or wrapped command, a URL broken at the screen's
	// edge): its group "text" (else its first group) is added to the text.
	// Blank rows are passed over, an Elided row marks the subject
	// Truncated and is passed over too; any other row, or a From, First
	// or To row, ends the text, as do the question and the menu.
	TextMore string `toml:"text_more"`
	// TextWrapped: only rows the agent wrapped go on with the text, each
	// while the row above it was too full for its first word; a blank or
	// Elided row ends the text.
	TextWrapped bool `toml:"text_wrapped"`
	// TextJoin is what joins TextMore's rows to the text. Unset: a space,
	// or nothing where TextWrapped and the text is one word (a URL); ""
	// for a path broken anywhere.
	TextJoin *string `toml:"text_join"`
	// TextTrim is cut from the end of the whole text where it matches
	// there: the ")" that closes "Run bash command(…)" after a command
	// of several rows.
	TextTrim string `toml:"text_trim"`
	// From starts the detail below the first row matching it after When;
	// First starts it at that row, whose content is First's group "line"
	// where it has one ("$ " left out of a command's first row only). A
	// reader with either whose row is not there does not apply (the next
	// is tried): two layouts under one heading are told apart so. Without
	// either there is a detail only when there is no Text: the rows below
	// When.
	From  string `toml:"from"`
	First string `toml:"first"`
	// To ends the detail above the first row matching it; the detail ends
	// anyway at the question or the menu, and at MaxSubjectDetailRows.
	To string `toml:"to"`
	// Line is each detail row's content, its group "line" (else its first
	// group): a box's borders or a "$ " prefix left out. A row it does not
	// match ends the detail.
	Line string `toml:"line"`
	// Elided matches a row that says the agent left rows out ("… +12
	// lines"): it is no part of the subject, and the subject is Truncated.
	Elided string `toml:"elided"`
	// Cut matches a row the agent cut short ("title: a long value...", a
	// heading ending in "…"), the text's row or one that goes on with it
	// or a detail row: the row is kept, and the subject is Truncated.
	Cut string `toml:"cut"`
	// Partial says the reader reads what is left of a prompt whose head
	// is off the screen (a file named by the question under a diff that
	// does not fit): what it reads is always Truncated.
	Partial bool `toml:"partial"`
	// Clipped is matched against the rows from the When row to the end of
	// the region, joined by newlines (multi-line mode): where it matches,
	// the agent's box is full and may have cut the subject off without a
	// word, so it is Truncated.
	Clipped string `toml:"clipped"`

	when, text, textMore, textTrim, from, first, to, line, elided, cut, clipped *regexp.Regexp
}

func (sr *SubjectReader) compile() error {
	if !SubjectKinds[sr.Kind] {
		return fmt.Errorf("kind %q: want command, edit, write, read, fetch, folder, tool or other", sr.Kind)
	}
	if sr.When == "" {
		return fmt.Errorf("missing when pattern")
	}
	if (sr.TextJoin != nil || sr.TextWrapped) && sr.TextMore == "" {
		return fmt.Errorf("text_join or text_wrapped without text_more: they say how text_more's rows go on with the text")
	}
	if sr.TextTrim != "" && sr.Text == "" {
		return fmt.Errorf("text_trim without text: it trims the text")
	}
	if sr.TextMore != "" && sr.Text == "" {
		return fmt.Errorf("text_more without text: it goes on with the text's row")
	}
	if sr.From != "" && sr.First != "" {
		return fmt.Errorf("from and first both set: the detail starts below one row or at it")
	}
	for _, f := range []struct {
		name string
		src  string
		re   **regexp.Regexp
	}{
		{"when", sr.When, &sr.when}, {"text", sr.Text, &sr.text}, {"text_more", sr.TextMore, &sr.textMore}, {"text_trim", sr.TextTrim, &sr.textTrim}, {"from", sr.From, &sr.from},
		{"first", sr.First, &sr.first}, {"to", sr.To, &sr.to}, {"line", sr.Line, &sr.line}, {"elided", sr.Elided, &sr.elided}, {"cut", sr.Cut, &sr.cut},
		{"clipped", sr.Clipped, &sr.clipped},
	} {
		comp := compileRow
		if f.name == "clipped" {
			comp = compileOne // a pattern over several rows
		}
		re, err := comp(f.src)
		if err != nil {
			return fmt.Errorf("%s: %v", f.name, err)
		}
		*f.re = re
	}
	return nil
}

// read reads the subject from rows of a screen cols wide, where menu is
// the first option row (len(rows) when none) and question the question row
// (-1 when none); headFirst takes the first When row, not the last. ok is
// false when the reader's When row, or its From or First row, is not
// there, or it reads nothing.
func (sr *SubjectReader) read(rows []string, question, menu, cols int, headFirst bool) (Subject, bool) {
	at := -1
	for i := menu - 1; i >= 0; i-- {
		if sr.when.MatchString(rows[i]) {
			at = i
			if !headFirst {
				break
			}
		}
	}
	if at < 0 {
		return Subject{}, false
	}
	end := menu
	if question > at && question < end {
		end = question
	}
	sub := Subject{Kind: sr.Kind, Truncated: sr.Partial}
	if sr.text != nil {
		for i := at; i < end; i++ {
			if t, ok := group(sr.text, rows[i], "text"); ok {
				sub.Truncated = sub.Truncated || sr.isCut(rows[i])
				sub.Text = sr.more(t, rows[i], rows[i+1:end], cols, &sub.Truncated)
				if sr.textTrim != nil {
					if m := sr.textTrim.FindAllStringIndex(sub.Text, -1); len(m) > 0 && m[len(m)-1][1] == len(sub.Text) {
						sub.Text = strings.TrimSpace(sub.Text[:m[len(m)-1][0]])
					}
				}
				break
			}
		}
	}
	start := -1
	switch {
	case sr.from != nil || sr.first != nil:
		for i := at + 1; i < end; i++ {
			if sr.first != nil && sr.first.MatchString(rows[i]) {
				start = i
				break
			}
			if sr.from != nil && sr.from.MatchString(rows[i]) {
				start = i + 1
				break
			}
		}
	case sr.text == nil:
		start = at + 1
	}
	if start < 0 && (sr.from != nil || sr.first != nil) {
		return Subject{}, false
	}
	if start >= 0 {
		var lines []string
		for i := start; i < end; i++ {
			row := rows[i]
			if sr.to != nil && sr.to.MatchString(row) {
				break
			}
			if sr.elided != nil && sr.elided.MatchString(row) {
				sub.Truncated = true
				continue
			}
			sub.Truncated = sub.Truncated || sr.isCut(row)
			if i == start && sr.first != nil && sr.first.SubexpIndex("line") > 0 {
				row, _ = groupRaw(sr.first, row, "line")
			} else if sr.line != nil && strings.TrimSpace(row) != "" {
				// Untrimmed: a command's own indentation is kept.
				l, ok := groupRaw(sr.line, row, "line")
				if !ok {
					break
				}
				row = l
			}
			if len(lines) == MaxSubjectDetailRows {
				sub.Truncated = true
				break
			}
			lines = append(lines, strings.TrimRight(row, " \t"))
		}
		sub.Detail = strings.Join(dedent(trimBlank(lines)), "\n")
		if sub.Text == "" {
			sub.Text = strings.Join(strings.Fields(sub.Detail), " ")
		}
	}
	if sub.Text == "" && sub.Detail == "" {
		// Its head without its body (drawn before the agent knew the
		// command): nothing read, so the next reader is tried.
		return Subject{}, false
	}
	if sr.clipped != nil && sr.clipped.MatchString(strings.Join(rows[at:], "\n")) {
		sub.Truncated = true
	}
	return sub, true
}

// more is text, read on row, gone on with the rows below that continue
// it (TextMore), up to the first that does not; an Elided or Cut row
// among them sets truncated.
func (sr *SubjectReader) more(text, row string, below []string, cols int, truncated *bool) string {
	if sr.textMore == nil {
		return text
	}
	sep := " "
	switch {
	case sr.TextJoin != nil:
		sep = *sr.TextJoin
	case sr.TextWrapped && !strings.ContainsAny(text, " \t"):
		sep = "" // one word broken at the edge: a URL, a path
	}
	parts := []string{text}
	prev := row
rows:
	for _, row := range below {
		for _, stop := range []*regexp.Regexp{sr.from, sr.first, sr.to} {
			if stop != nil && stop.MatchString(row) {
				break rows
			}
		}
		blank := strings.TrimSpace(row) == ""
		if elided := sr.elided != nil && sr.elided.MatchString(row); blank || elided {
			*truncated = *truncated || elided
			if sr.TextWrapped {
				break
			}
			continue
		}
		t, ok := group(sr.textMore, row, "text")
		if !ok || t == "" || sr.TextWrapped && !wrapped(prev, t, cols) {
			break
		}
		*truncated = *truncated || sr.isCut(row)
		parts = append(parts, t)
		prev = row
	}
	return strings.Join(strings.Fields(strings.Join(parts, sep)), " ")
}

// isCut tells whether the agent cut row short (Cut).
func (sr *SubjectReader) isCut(row string) bool {
	return sr.cut != nil && sr.cut.MatchString(row)
}

// subject is what the prompt in rows, on a screen cols wide, asks to
// approve: the first reader's that finds its rows, or nil. question is the
// question row (-1: none), menu the first option row.
func (p *PromptParser) subject(rows []string, question, menu, cols int) *Subject {
	for i := range p.Subject {
		if sub, ok := p.Subject[i].read(rows, question, menu, cols, p.HeadFirst); ok {
			sub.reader = fmt.Sprintf("%s.subject[%d]", p.name, i+1)
			return &sub
		}
	}
	if p.SubjectRequired {
		return &Subject{Kind: "other", Truncated: true}
	}
	return nil
}

// group is the named group of re's match on s, else its first group, else
// the whole match, trimmed; ok is false when re does not match.
func group(re *regexp.Regexp, s, name string) (string, bool) {
	g, ok := groupRaw(re, s, name)
	return strings.TrimSpace(g), ok
}

// groupRaw is group untrimmed.
func groupRaw(re *regexp.Regexp, s, name string) (string, bool) {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	if i := re.SubexpIndex(name); i > 0 {
		return m[i], true
	}
	if len(m) > 1 {
		return m[1], true
	}
	return m[0], true
}

// trimBlank drops blank rows at both ends.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// dedent removes the indentation all non-blank rows share.
func dedent(lines []string) []string {
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if common < 0 || n < common {
			common = n
		}
	}
	if common <= 0 {
		return lines
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= common {
			out[i] = l[common:]
		}
	}
	return out
}

// Clean makes the subject inert and bounded: see CleanText. The text stays
// one line.
func (s *Subject) Clean() {
	var cut bool
	s.Text, cut = CleanText(strings.Join(strings.Fields(s.Text), " "), MaxSubjectText)
	s.Truncated = s.Truncated || cut
	detail, cut := CleanText(s.Detail, 0)
	if len(detail) > MaxSubjectDetail {
		i := MaxSubjectDetail
		for i > 0 && !utf8.RuneStart(detail[i]) {
			i--
		}
		detail, cut = detail[:i], true
	}
	s.Detail = detail
	s.Truncated = s.Truncated || cut
}

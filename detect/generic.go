package detect

import (
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The generic reader sits under every agent's rules. Rules are written for
// the screens someone recorded; a new agent, or a new release of a known
// one, first shows screens nobody has (a welcome menu, a login, an API
// error), and there the rules match nothing, or only a composer. The
// reader knows no agent: it reads the shapes every terminal UI draws the
// same way, and says so in its reason ids. It is conservative where a
// mistake costs most: it calls a screen blocked only for a menu or an entry
// field at the live bottom of the screen, never for one in the history.
const (
	ReasonGenericMenu  = "generic.menu"
	ReasonGenericInput = "generic.input"
	ReasonGenericError = "generic.error"
	ReasonGenericRetry = "generic.retry"
)

// GenericReader reports whether reason names a verdict of the generic
// reader rather than of an agent's rules.
func GenericReader(reason string) bool {
	switch reason {
	case ReasonGenericMenu, ReasonGenericInput, ReasonGenericError, ReasonGenericRetry:
		return true
	}
	return false
}

// genericSettle and genericKeyGap pace answers to a menu no manifest
// describes: as slow as the slowest agent measured (Claude Code drops a
// key typed within ~150 ms of its menu), one key at a time, each arrow
// typed once the screen shows the last one moved.
const (
	genericSettle = 300 * time.Millisecond
	genericKeyGap = 100 * time.Millisecond
)

var genericMenuKeys, _ = parseKeys("<down*{down}><up*{up}><enter>")

// readGeneric reads s with no agent's rules. ok is false when it sees
// nothing it can name.
func readGeneric(agent string, s Screen) (Verdict, bool) {
	rows := genericRows(s)
	bottom := len(rows) - 1
	for bottom >= 0 && rows[bottom].blank {
		bottom--
	}
	if bottom < 0 {
		return Verdict{}, false
	}
	if v, ok := genericMenu(agent, s, rows, bottom); ok {
		return v, true
	}
	if v, ok := genericInput(agent, s, rows, bottom); ok {
		return v, true
	}
	if v, ok := genericNewest(agent, rows, bottom, s.Cols); ok {
		return v, true
	}
	return Verdict{}, false
}

// gRow is one screen row with box borders blanked out (columns kept).
type gRow struct {
	text  string // trailing spaces trimmed
	style string // one Style byte per rune of text, or ""
	blank bool   // nothing but spaces and box drawing
	boxed bool   // box drawing was on it: a side, an edge or a line across
	// border: nothing but box drawing with a corner (a box's top or
	// bottom edge); rule: nothing but box drawing, no corner (a line
	// across, as above and below a composer).
	border, rule bool
	hint         uint8 // rowHint's answer: 0 not asked yet, 1 a hint, 2 not
}

// verticalRunes are box sides; they are blanked so that what a box holds
// reads as plain rows at their own columns.
const verticalRunes = "│┃║╎╏┆┇┊┋▏▕"

func genericRows(s Screen) []gRow {
	out := make([]gRow, len(s.Lines))
	for i, l := range s.Lines {
		text, boxed := false, false
		for _, r := range l {
			switch {
			case isBorder(r):
				boxed = true
			case r != ' ' && r != '\u00a0':
				text = true
			}
		}
		t := l
		if boxed {
			// Blank the borders, keeping every other rune at its column.
			t = strings.Map(func(r rune) rune {
				if isBorder(r) {
					return ' '
				}
				return r
			}, l)
		}
		t = strings.TrimRight(t, " \u00a0")
		st := ""
		if i < len(s.Styles) {
			st = s.Styles[i]
			if n := utf8.RuneCountInString(t); len(st) > n {
				st = st[:n]
			}
		}
		out[i] = gRow{text: t, style: st, blank: !text, boxed: boxed, border: !text && strings.ContainsAny(l, cornerRunes),
			rule: !text && boxed && !strings.ContainsAny(l, cornerRunes+verticalRunes)}
	}
	return out
}

// cornerRunes are a box's corners: a row of them is a box's edge, where a
// row of "─" alone may be any rule.
const cornerRunes = "╭╮╰╯┌┐└┘┏┓┗┛╔╗╚╝"

// isBorder: box drawing or a box's side (verticalRunes), all of them in
// U+2500–U+259F: most runes are ruled out by one comparison.
func isBorder(r rune) bool {
	return r >= 0x2500 && r <= 0x259f && (isBoxDrawing(r) || strings.ContainsRune(verticalRunes, r))
}

// isBoxDrawing: the Unicode box-drawing block (borders, rules, corners).
func isBoxDrawing(r rune) bool { return r >= 0x2500 && r <= 0x257f }

// hintRe: a key hint under a menu or a field ("↑/↓ to navigate · enter to
// select · esc to cancel").
var hintRe = regexp.MustCompile(`(?i)(↑|↓|←|→|\benter\b|\breturn\b|\besc\b|\bescape\b|\btab\b|\bctrl[+-]|\bspace\b|\bnavigate\b|\bto (?:select|confirm|cancel|go back|submit|continue|choose)\b|\bpress\b)`)

// hintWords: hintRe cannot match a row that holds none of them (lower-cased).
var hintWords = []string{"↑", "↓", "←", "→", "enter", "return", "esc", "tab", "ctrl", "space", "navigate", "press",
	"to select", "to confirm", "to cancel", "to go back", "to submit", "to continue", "to choose"}

// isHint says whether t is a key hint (hintRe), testing for its words first.
func isHint(t string) bool {
	return mentions(strings.ToLower(t), hintWords...) && hintRe.MatchString(t)
}

// rowHint is isHint of row i, asked once per classification: the menu and
// the field readers both ask it of the same rows.
func rowHint(rows []gRow, i int) bool {
	if rows[i].hint == 0 {
		rows[i].hint = 2
		if isHint(rows[i].text) {
			rows[i].hint = 1
		}
	}
	return rows[i].hint == 1
}

// moreRe: a list's note that it scrolls on ("▼ 218 more", "↓ 3 more
// below"), read as a hint under the menu.
var moreRe = regexp.MustCompile(`(?i)^\s*[▼▲↓↑…]?\s*\(?\d+ more\b`)

// navigationRe: a hint that the list takes arrows and Enter, as a menu
// does and a composer's suggestions may not say.
var navigationRe = regexp.MustCompile(`(?i)(↑|↓|\bnavigate\b|\bto select\b|\benter to (?:select|confirm|choose)\b)`)

// noteRe: a sentence under a menu, above its hints.
var noteRe = regexp.MustCompile(`[.!)]$`)

// searchRe: a search field's placeholder.
var searchRe = regexp.MustCompile(`(?i)^(?:search|filter|type to)\b|(?:\.\.\.|…)$`)

// sentenceRe: a description under an option: a sentence of five words or
// more.
var sentenceRe = regexp.MustCompile(`^\S+(?:\s+\S+){4,}[.!]$`)

// menuRow is a row read as a menu option.
type menuRow struct {
	row      int
	label    string
	labelCol int  // rune column where the label starts
	leadCol  int  // rune column of the row's first glyph (mark or number)
	marked   bool // a selection mark stands before it (or a card's arrow after it)
	group    int  // the card it is on, where options are cards
	styled   bool // most of its label is drawn reverse or on a background
	numbered bool
}

// selectionMarks point at the selected option.
const selectionMarks = "❯›>▶▸►➤→●◉"

// idleMarks stand before the options that are not selected.
const idleMarks = "○◯◦"

var numberRe = regexp.MustCompile(`^(\d{1,2})[.)]\s+`)

// readMenuRow reads r as an option: an optional mark (or icon), an
// optional number, then a label that starts with a letter, a digit or a
// quote.
func readMenuRow(i int, r gRow) (menuRow, bool) {
	runes := []rune(r.text)
	col := 0
	for col < len(runes) && runes[col] == ' ' {
		col++
	}
	if col == len(runes) {
		return menuRow{}, false
	}
	if moreRe.MatchString(r.text) {
		return menuRow{}, false // "▼ 218 more": the list goes on, no option
	}
	m := menuRow{row: i, leadCol: col}
	if strings.ContainsRune(selectionMarks, runes[col]) {
		m.marked = true
		col++
	} else if strings.ContainsRune(idleMarks, runes[col]) || icon(runes, col) {
		col++
	}
	for col < len(runes) && runes[col] == ' ' {
		col++
	}
	rest := string(runes[col:])
	if n := numberRe.FindString(rest); n != "" {
		m.numbered = true
		col += utf8.RuneCountInString(n)
		rest = rest[len(n):]
	}
	first, _ := utf8.DecodeRuneInString(rest)
	if rest == "" || !(unicode.IsLetter(first) || unicode.IsDigit(first) || strings.ContainsRune(`"'“‘(/`, first)) {
		return menuRow{}, false
	}
	m.labelCol = col
	m.label = strings.TrimSpace(rest)
	// A label's own columns are cut at a wide gap: a menu row often carries
	// a description or a shortcut to its right, or, on a card, an arrow at
	// the selected one's end.
	if k := strings.Index(m.label, "  "); k > 0 {
		if tail := strings.TrimSpace(m.label[k:]); tail == "→" || tail == "←" || tail == "◀" {
			m.marked = true
		}
		m.label = strings.TrimSpace(m.label[:k])
	}
	if r.style != "" {
		from, n, styled := col, utf8.RuneCountInString(m.label), 0
		for g := from; g < from+n && g < len(r.style); g++ {
			if r.style[g]&(StyleReverse|StyleBackground) != 0 {
				styled++
			}
		}
		m.styled = n > 0 && 2*styled > n
	}
	return m, true
}

// icon tells whether runes[col] is an icon before a label: a symbol
// outside ASCII ("☺", "✦", "⚷") with a space after it. ("$ " and "# "
// begin commands, not options.)
func icon(runes []rune, col int) bool {
	r := runes[col]
	return r > 0x7f && unicode.IsSymbol(r) && col+1 < len(runes) && runes[col+1] == ' '
}

// genericMenu finds a selection menu at the live bottom of the screen:
// two or more options aligned in one column, exactly one of them marked
// (or drawn in reverse) as selected, a title above them, and under them
// nothing but key hints. A menu with anything else below it (a composer,
// a reply) is history, not a question.
func genericMenu(agent string, s Screen, rows []gRow, bottom int) (Verdict, bool) {
	// Under the options: key hints, a "N more" note, and where the hints
	// say the list is chosen from with arrows, a note or two ("Your
	// choice is saved").
	end, navigable, notes := bottom, false, 0
	for hints := 0; end >= 0 && hints <= 3; end-- {
		if rows[end].blank {
			continue
		}
		m, ok := readMenuRow(end, rows[end])
		if ok && (m.marked || m.numbered || !rowHint(rows, end)) {
			if !navigable || m.marked || m.numbered || notes >= 2 || !noteRe.MatchString(rows[end].text) {
				break
			}
			notes++
			continue
		}
		if !rowHint(rows, end) && !moreRe.MatchString(rows[end].text) {
			if !navigable || notes >= 2 {
				return Verdict{}, false
			}
			notes++
			continue
		}
		navigable = navigable || navigationRe.MatchString(rows[end].text)
		hints++
	}
	if end < 0 {
		return Verdict{}, false
	}
	last, ok := readMenuRow(end, rows[end])
	if !ok {
		return Verdict{}, false
	}
	// Walk up the block: rows aligned with the last option are options (or
	// their wrapped rest), rows indented under a label are descriptions.
	// Options drawn as cards, each in a box of its own, are told apart by
	// the boxes' edges: group counts them.
	block := []menuRow{last}
	top, group, carded := end, 0, false
	for i := end - 1; i >= 0 && end-i <= 30; i-- {
		if rows[i].border {
			if i+1 <= end && rows[i+1].border {
				group++ // one card's top edge over the next one's bottom
				carded = true
			}
			continue
		}
		if rows[i].rule {
			// A line across parts the screen's regions (a composer from
			// what is above it), not options: unless numbered options go on
			// above it (Claude's "4. Chat about this" under a line).
			if above, ok := readMenuRow(i-1, rows[max(i-1, 0)]); i == 0 || !ok || !above.numbered || !last.numbered || !aligned(above, last) {
				break
			}
			continue
		}
		if rows[i].blank {
			// One blank row may part options; two end the menu.
			if i > 0 && rows[i-1].blank && !rows[i-1].border {
				break
			}
			continue
		}
		m, ok := readMenuRow(i, rows[i])
		switch {
		case ok && aligned(m, last) && (m.marked || m.numbered || !rowHint(rows, i)):
			m.group = group
			block = append(block, m)
			top = i
			continue
		case !(ok && m.marked) && leadCol(rows[i].text) > last.labelCol:
			continue // a description, indented under its option's label
		}
		break
	}
	reverse(block)
	numbered := false
	for _, m := range block {
		numbered = numbered || m.numbered && m.marked
	}
	// Rows wrapped from the one above (a label or a description too long
	// for a narrow screen) join it; then in a numbered menu the numbered
	// items are the options, and in another every item but the sentences
	// under them (a description: "Store agent state on this device.").
	var items []menuRow
	last = menuRow{row: -2}
	for _, m := range block {
		if len(items) > 0 && !m.marked && !m.numbered && m.row == last.row+1 && wrapped(rows[last.row].text, rows[m.row].text, s.Cols) && !sentenceEnds(rows[last.row].text, m.label) {
			items[len(items)-1].label += " " + m.label
		} else {
			items = append(items, m)
		}
		last = m
	}
	var opts []menuRow
	for i, m := range items {
		switch {
		case carded:
			// A card's first row is its option, the rest describe it.
			if i == 0 || items[i-1].group != m.group {
				opts = append(opts, m)
			} else if m.marked {
				opts[len(opts)-1].marked = true
			}
		case numbered && m.numbered || !numbered && (m.marked || !sentenceRe.MatchString(m.label)):
			opts = append(opts, m)
		}
	}
	if len(opts) < 2 || len(opts) > 12 {
		return Verdict{}, false
	}
	selected, marks, styled := -1, 0, 0
	for i, o := range opts {
		if o.marked {
			marks++
			selected = i
		}
		if o.styled {
			styled++
		}
	}
	if marks != 1 {
		if marks > 1 || styled != 1 {
			return Verdict{}, false
		}
		for i, o := range opts {
			if o.styled {
				selected = i
			}
		}
	}
	for i := range opts {
		opts[i].label = optionLabel(opts[i].label)
		if opts[i].label == "" || utf8.RuneCountInString(opts[i].label) > 100 {
			return Verdict{}, false // prose, not an option
		}
	}
	// The title: the nearest text above the options, past a group's
	// heading ("Popular") and a search field in a box.
	q := top - 1
	for q >= 0 && rows[q].blank && top-q <= 2 {
		q--
	}
	if q < 0 || rows[q].blank {
		return Verdict{}, false
	}
	for skipped := 0; skipped < 2 && q > 0; skipped++ {
		t := strings.TrimSpace(rows[q].text)
		lead := leadCol(rows[q].text)
		heading := q == top-1 && (lead == opts[0].labelCol || lead == opts[0].leadCol) && len(strings.Fields(t)) <= 3 && !strings.ContainsAny(t[len(t)-1:], ".?:!")
		search := rows[q].boxed && searchRe.MatchString(t)
		if !heading && !search {
			break
		}
		above := q - 1
		for above >= 0 && rows[above].blank && q-above <= 3 {
			above--
		}
		if above < 0 || rows[above].blank {
			break
		}
		q = above
	}
	if rowHint(rows, q) {
		return Verdict{}, false // a status line over a panel, not a title
	}
	question := genericQuestion(rows, q, s.Cols)
	if question == "" {
		return Verdict{}, false
	}
	if s.CursorVisible && s.CursorRow < len(rows) && !rows[s.CursorRow].blank {
		// A visible cursor outside the menu is a composer's: the person is
		// typing, and the list is its suggestions; unless the hints say the
		// list is chosen from with arrows and Enter, and the cursor is in
		// its search field above it. On the marked row of a list without
		// numbers, it is a composer's own row ("› Ask …").
		if s.CursorRow > bottom || s.CursorRow < q && !(navigable && q-s.CursorRow <= 4) {
			return Verdict{}, false
		}
		if s.CursorRow == opts[selected].row && !opts[selected].numbered {
			return Verdict{}, false
		}
	}
	p := &Prompt{Kind: genericKind(question, opts), Question: question, Settle: genericSettle, KeyGap: genericKeyGap}
	for i, o := range opts {
		p.Options = append(p.Options, Option{
			ID:       itoa(i + 1),
			Label:    o.label,
			Selected: i == selected,
			Keys:     genericMenuKeys.expand(keyContext{id: itoa(i + 1), index: i, count: len(opts), selected: selected}),
		})
	}
	p.Stepped = true
	p.Seal()
	return Verdict{Agent: agent, State: StateBlocked, Reason: ReasonGenericMenu,
		Evidence: Evidence{Region: "screen", Text: rows[opts[selected].row].text}, Prompt: p}, true
}

var (
	authWordsRe  = regexp.MustCompile(`(?i)\b(?:sign[ -]?in|log[ -]?in|login|authenticat\w*|api[ _-]?key|account|subscription|provider)\b`)
	trustWordsRe = regexp.MustCompile(`(?i)\btrust\w*\b`)
)

// genericKind names what a menu asks by its words: signing in (a login,
// a provider, an API key), trusting a folder, or any other question.
func genericKind(question string, opts []menuRow) string {
	words := question
	for _, o := range opts {
		words += "\n" + o.label
	}
	switch {
	case trustWordsRe.MatchString(words):
		return "trust"
	case authWordsRe.MatchString(words):
		return "auth"
	}
	return "question"
}

// sentenceEnds tells whether prev ends a sentence that next does not go
// on with ("… connected devices." over "Proceed locally"), though prev is
// full enough to have wrapped.
func sentenceEnds(prev, next string) bool {
	prev = strings.TrimSpace(prev)
	first, _ := utf8.DecodeRuneInString(next)
	return strings.HasSuffix(prev, ".") || strings.HasSuffix(prev, "!") || strings.HasSuffix(prev, "?") && unicode.IsUpper(first)
}

// aligned tells whether two rows are options of one menu: their labels
// start in one column, or their numbers do.
func aligned(a, b menuRow) bool {
	if a.labelCol == b.labelCol {
		return true
	}
	// "❯ 1. Yes" over "  2. No": the mark takes the indent of the others.
	return a.numbered && b.numbered && (a.marked != b.marked) && absInt(a.labelCol-b.labelCol) <= 2
}

// leadCol is the column of a row's first glyph.
func leadCol(text string) int {
	return utf8.RuneCountInString(text) - utf8.RuneCountInString(strings.TrimLeft(text, " "))
}

// labelTailRe: what follows an option's words on its row: a key in
// brackets ("(y)", "(esc)", "(shift+tab)") or a note after " · ".
var labelTailRe = regexp.MustCompile(`(?i)(?:\s+\((?:[a-z0-9]|[^()]*\b(?:esc|tab|enter|ctrl)\b[^()]*)\)|\s+·\s.*)$`)

// optionLabel is an option's words without the key hints drawn after them.
func optionLabel(label string) string {
	for {
		cut := labelTailRe.ReplaceAllString(label, "")
		if cut == label {
			return strings.TrimSpace(label)
		}
		label = cut
	}
}

func absInt(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

func reverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// genericQuestion is the title at row q: the row in its paragraph (up to
// four rows above) that ends in "?" or ":", else the paragraph, its rows
// joined where one was wrapped onto the next.
func genericQuestion(rows []gRow, q, cols int) string {
	top := q
	for top > 0 && q-top < 3 && !rows[top-1].blank && leadCol(rows[top-1].text) == leadCol(rows[q].text) {
		top--
	}
	for i := q; i >= top; i-- {
		t := strings.TrimSpace(rows[i].text)
		if strings.HasSuffix(t, "?") || strings.HasSuffix(t, ":") {
			return t
		}
	}
	// The paragraph is the rows wrapped into row q, from the bottom up.
	start := q
	for start > top && wrapped(rows[start-1].text, rows[start].text, cols) {
		start--
	}
	var parts []string
	for i := start; i <= q; i++ {
		parts = append(parts, strings.TrimSpace(rows[i].text))
	}
	return strings.Join(parts, " ")
}

// inputLabelRe names what a field asks a person to type.
var inputLabelRe = regexp.MustCompile(`(?i)(\bapi[ _-]?key\b|\bpaste\b|\benter (?:the |your |an? )?(?:[\w-]+ ){0,3}(?:code|key|token|password|url)\b|\b(?:authori[sz]ation|verification|login|auth|one-time) code\b|\bpassword:|\btoken:)`)

// inputRefusedRe: words that report on a key rather than ask for one.
var inputRefusedRe = regexp.MustCompile(`(?i)\b(?:invalid|incorrect|not used|expired|failed|error)\b`)

// genericInput finds a field waiting for text at the live bottom: a label
// that says what to type, then the field (under it, or on its row after
// "label: ", the cursor in it), then nothing but hints. Or a sign-in that
// waits on the person in a browser ("Waiting for authorization…").
func genericInput(agent string, s Screen, rows []gRow, bottom int) (Verdict, bool) {
	// Walk up over hints and the field itself (at most two rows of it) to
	// the label.
	seen, ruled := 0, false
	var hints []string
	for i := bottom; i >= 0 && bottom-i <= 10; i-- {
		if rows[i].blank {
			ruled = ruled || rows[i].rule || rows[i].border
			continue
		}
		t, cut := strings.TrimSpace(rows[i].text), false
		if s.CursorVisible && s.CursorRow == i && strings.Contains(t, ": ") {
			t, cut = t[:strings.LastIndex(t, ": ")+1], true // what is typed after the label is the person's
		}
		low := strings.ToLower(t)
		if mentions(low, "key", "paste", "enter", "code", "password", "token") && inputLabelRe.MatchString(t) && utf8.RuneCountInString(t) <= 100 && !errorRe.MatchString(t) && !inputRefusedRe.MatchString(t) &&
			(strings.HasSuffix(t, ":") || strings.HasSuffix(t, "?") || s.CursorVisible && s.CursorRow >= i && s.CursorRow <= i+2 ||
				ruled && strings.HasSuffix(t, ".")) {
			// Freeform: what to type is the person's, with runtime_answer's text.
			p := &Prompt{Kind: "auth", Question: t, Freeform: true, Settle: genericSettle, unread: true}
			p.Seal()
			return Verdict{Agent: agent, State: StateBlocked, Reason: ReasonGenericInput,
				Evidence: Evidence{Region: "screen", Text: t}, Prompt: p}, true
		}
		if mentions(low, "waiting for") && authWaitRe.MatchString(t) {
			return genericAuthWait(agent, rows, i, hints), true
		}
		if cut && isHint(t) || !cut && rowHint(rows, i) {
			hints = append(hints, t)
			continue
		}
		if bannerRe.MatchString(t) && errorRe.MatchString(t) {
			continue // what was typed was refused; the field waits again
		}
		if seen++; seen > 3 {
			break
		}
	}
	return Verdict{}, false
}

// authWaitRe: a sign-in that waits on the person elsewhere (a browser, a
// device code).
var authWaitRe = regexp.MustCompile(`(?i)\bwaiting for (?:authori[sz]ation|authentication|(?:you to )?(?:log|sign)[ -]?in|login|the browser)\b`)

// genericAuthWait is a browser sign-in's wait at row i: blocked on the
// person, who answers it elsewhere; the keys its hints name (hints, newest
// last) are its options ("Esc back").
func genericAuthWait(agent string, rows []gRow, i int, hints []string) Verdict {
	q := strings.TrimSpace(rows[i].text)
	// The instruction above the wait says what to do ("Open the following
	// URL in your browser to sign in:").
	for j := i - 1; j >= 0 && i-j <= 12; j-- {
		if t := strings.TrimSpace(rows[j].text); strings.HasSuffix(t, ":") && (strings.Contains(strings.ToLower(t), "browser") || strings.Contains(strings.ToLower(t), "sign in")) {
			q = t
			break
		}
	}
	p := &Prompt{Kind: "auth", Question: q, Settle: genericSettle}
	for k := len(hints) - 1; k >= 0; k-- {
		for _, m := range hintKeyRe.FindAllStringSubmatch(hints[k], -1) {
			key := strings.ToLower(m[1])
			p.Options = append(p.Options, Option{ID: itoa(len(p.Options) + 1), Label: strings.TrimSpace(m[2]), Keys: namedKeys[key]})
		}
	}
	if len(p.Options) == 0 {
		p.Freeform, p.unread = true, true
	}
	p.Seal()
	return Verdict{Agent: agent, State: StateBlocked, Reason: ReasonGenericInput, Evidence: Evidence{Region: "screen", Text: strings.TrimSpace(rows[i].text)}, Prompt: p}
}

// hintKeyRe: "Esc back", "Enter retry", "esc to go back" in a hint row.
var hintKeyRe = regexp.MustCompile(`(?i)\b(esc|enter)\s+(?:to\s+)?([a-z]+(?: [a-z]+)?)`)

// errorRe: an API error's words.
var errorRe = regexp.MustCompile(`(?i)(\b(?:4(?:0[0-9]|29)|5(?:0[0-4]|29))\b.{0,40}\b(?:error|status|too many|unauthori[sz]ed|forbidden|overloaded|unavailable|rate|bad gateway|timeout)|\b(?:error|status)\b.{0,20}\b(?:4\d\d|5\d\d)\b|\brate[ -]?limit(?:ed)?\b|\bquota\b|\btoo many requests\b|\brequest failed\b|\bapi error\b|\boverloaded\b|\binsufficient (?:credits|balance|quota)\b|\bexperiencing errors\b|^(?:log ?in|sign[ -]?in|authentication|authori[sz]ation)\s+(?:timed out|failed)\b|\b(?:provider|service|server|model) (?:is )?(?:temporarily )?(?:unavailable|overloaded|down)\b)`)

// bannerRe: a row that reports a failure from its first word, after an
// icon or two ("✗ Error: …", "⎿ API Error: 401 …", "Unable to connect."),
// as an error banner does and a sentence of a reply mostly does not.
var bannerRe = regexp.MustCompile(`(?i)^(?:[⚠✗✕✖×❌⛔■!]|(?:log ?in|sign[ -]?in|authentication|authori[sz]ation)\s+(?:timed out|failed)\b|(?:[^\p{L}\p{N}\s]{1,3}\s*){0,2}\[?(?:api\s+)?(?:error|failed|failure|unable|could ?n[o']t|rate|quota|too many|request|http|status|unexpected|overloaded|insufficient|unauthori[sz]ed|forbidden|\d{3}\b))`)

// failureWords: neither errorRe nor unreachableRe can match a text that
// holds none of them (lower-cased).
var failureWords = []string{"error", "status", "rate", "quota", "too many", "request", "overloaded", "insufficient",
	"timed out", "failed", "unavailable", "down", "unauthori", "forbidden", "timeout", "bad gateway",
	"unable to", "could", "connection", "enotfound", "econnrefused", "getaddrinfo"}

// unreachableRe: a server the agent could not reach.
var unreachableRe = regexp.MustCompile(`(?i)\b(?:unable to (?:connect|reach)|could ?n[o']t (?:connect|reach)|connection (?:refused|failed|error)|ENOTFOUND|ECONNREFUSED|getaddrinfo|fetch failed)\b`)

// mentions says whether low (lower-cased text) holds one of words: a
// cheap test before a case-blind expression that cannot match without
// one of them. The generic reader runs on every screen an agent's rules
// read idle, and most rows name none.
func mentions(low string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// retryRe: a retry counting down.
var retryRe = regexp.MustCompile(`(?i)(\bretrying\b.{0,20}?\bin \d+(?:\.\d+)?\s*(?:ms|s|sec|secs|seconds?|m|min)\b|\bretrying\b\s*(?:\.\.\.|…)|\bretry(?:ing)?\b.{0,30}\battempt \d+\s*(?:/|of)\s*\d+|\battempt \d+\s*(?:/|of)\s*\d+.{0,30}\bretry)`)

// endedRe: a turn the person ended, newer than anything above it.
var endedRe = regexp.MustCompile(`(?i)\b(?:interrupted|cancell?ed|aborted)\b`)

// genericNewest reads the newest text on screen, the last rows above the
// agent's own chrome: an error there is the turn's end, a retry counting
// down is work going on.
func genericNewest(agent string, rows []gRow, bottom, cols int) (Verdict, bool) {
	n := 0
	for i := bottom; i >= 0 && n < 8; i-- {
		if rows[i].blank {
			continue
		}
		n++
		t := strings.TrimSpace(rows[i].text)
		low := strings.ToLower(t)
		if mentions(low, "interrupt", "cancel", "abort") && endedRe.MatchString(t) {
			return Verdict{}, false // the person stopped it; the agent's rules say what now
		}
		if mentions(low, "retry") && retryRe.MatchString(t) {
			return Verdict{Agent: agent, State: StateWorking, Reason: ReasonGenericRetry,
				Evidence: Evidence{Region: "screen", Text: t}}, true
		}
		if !bannerRe.MatchString(t) {
			continue
		}
		// The banner with the rows wrapped from it: on a narrow screen its
		// words run on ("… getaddrinfo" / "ENOTFOUND app.letta.com").
		whole := t
		for j := i + 1; j <= bottom && j <= i+3 && !rows[j].blank && wrapped(rows[j-1].text, rows[j].text, cols); j++ {
			whole += " " + strings.TrimSpace(rows[j].text)
		}
		if mentions(strings.ToLower(whole), failureWords...) && (errorRe.MatchString(whole) || unreachableRe.MatchString(whole)) {
			msg, _ := CleanText(whole, 300)
			return Verdict{Agent: agent, State: StateError, Reason: ReasonGenericError,
				Evidence: Evidence{Region: "screen", Text: t}, Message: msg}, true
		}
	}
	return Verdict{}, false
}

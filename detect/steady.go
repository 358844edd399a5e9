package detect

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
)

// A session classifies its screen every time it changes, and most changes
// are an agent animating: a spinner glyph turning (✶ → ✻, ⠋ → ⠙), the
// cursor parked somewhere else. Such a change cannot change what a
// manifest's rules decide when no rule can tell the two apart, so the
// last verdict may stand (the sessions package's verdict cache). This file
// says when that holds; the proof that it does is the corpus test in
// sessions (spincache_test.go).
//
// What the rules read of a screen, on the path to a rule's verdict: the
// rows' text, through regular expressions (conditions, a region's after
// and before, a prompt parser's question, option, continuation and reject),
// blank rows (strings.TrimSpace), columns (runeWidth, a sidebar's
// uprightBorders), the title and the progress report, the alternate screen
// flag. Not the cursor: only the generic reader reads it, and it runs only
// when the rules decide idle (evaluate). Styles only in a prompt's
// extraction, and a prompt's options and question, which decide whether a
// blocked rule is claimed, come from the text alone.

// spinnerRunes are the glyphs agents animate in place, as found in the
// recorded corpus (fixtures/*/*/sessions, sessions' TestMeasureScreenChanges):
// the braille block U+2800–U+28FF (the dot spinners of Codex, Gemini, Qwen,
// Cline, OpenCode, Kilo, Pi, Letta, Droid, Auggie, Continue and Qoder, in the
// rows and in Codex's and Qoder's titles) and these. Never ASCII: "|/-\"
// spinners (Grok) are text a rule may read.
const spinnerRunes = "" +
	"·✢✳✶✻✽" + // Claude Code's spinner row ("✶ Burrowing…")
	"◐◑◒◓" + // Qwen Code's title while working, Claude Code's too
	"⊶⊷" + // Gemini CLI's and Qwen Code's "thinking" glyph
	"■⬝" + // OpenCode's and Kilo's bar ("■■■⬝⬝⬝⬝⬝  esc interrupt")
	"●◉◎○" // Copilot CLI's footer ("◎ Working")

// SpinnerGlyph says whether r is one of the glyphs agents animate in
// place (spinnerRunes), which a verdict may outlast (Manifest.SpinnerBlind).
func SpinnerGlyph(r rune) bool { return isSpinnerRune(r) }

// isSpinnerRune says whether r is one of the glyphs agents animate.
func isSpinnerRune(r rune) bool {
	return r >= 0x2800 && r <= 0x28ff || r > 0x7f && strings.ContainsRune(spinnerRunes, r)
}

// spinnerCandidates lists every spinner rune, in order.
func spinnerCandidates() []rune {
	var out []rune
	for r := rune(0x2800); r <= 0x28ff; r++ {
		out = append(out, r)
	}
	out = append(out, []rune(spinnerRunes)...)
	slices.Sort(out)
	return slices.Compact(out)
}

// spinnerFold is spinner glyphs a manifest's rules cannot tell apart,
// each to the first of its kind; one alike with no other is not in it.
type spinnerFold struct{ rep map[rune]rune }

// prepareReuse works out, once the manifest is loaded (and again once it
// took another's rules, Set.Load), which spinner glyphs each verdict of
// its rules cannot tell apart. A verdict is its rule's because every rule
// above it did not match, and it did: the rules below it are never read.
// So for rule i, two glyphs are alike when every literal and character
// class of every pattern rules 0..i read (their conditions, their prompt
// parsers', every region's after and before) holds both or neither, and
// the rules' own rune tests (blank, width, a sidebar's border) say the
// same of both. A regular expression matches a text, and at the same
// runes, on either of two such glyphs alike: its automaton only ever asks
// whether the rune is in a set. Claude's rules, for one, name ✻ ("✻
// Worked for 6s", the finished turn) below the spinner row's rule, and ·
// ("Enter to confirm · Esc to cancel") above it: its spinner row's verdict
// outlasts ✶ → ✻, but not ✽ → ·.
func (m *Manifest) prepareReuse() {
	m.ruleAt = make(map[string]int, len(m.Rules))
	m.folds = make([]*spinnerFold, len(m.Rules))
	candidates := spinnerCandidates()
	// in[r]: the sets (numbered as met) that hold candidate r. A set that
	// holds every candidate, or none, tells none apart and is left out.
	in := map[rune][]int{}
	sets := 0
	addSet := func(ranges []rune) {
		var held []rune
		for i := 0; i+1 < len(ranges); i += 2 {
			lo, hi := ranges[i], ranges[i+1]
			for r := max(lo, 0x2800); r <= min(hi, 0x28ff); r++ {
				held = append(held, r)
			}
			for _, r := range spinnerRunes {
				if lo <= r && r <= hi {
					held = append(held, r)
				}
			}
		}
		if len(held) == 0 || len(held) == len(candidates) {
			return
		}
		for _, r := range held {
			in[r] = append(in[r], sets)
		}
		sets++
	}
	broken := false
	addRe := func(re *regexp.Regexp) {
		if re == nil {
			return
		}
		tree, err := syntax.Parse(re.String(), syntax.Perl)
		if err != nil {
			// Compiled by the regexp package, so it parses; if it ever does
			// not, no verdict is reused.
			broken = true
			return
		}
		runeSets(tree, addSet)
	}
	for i := range m.Regions {
		addRe(m.Regions[i].after)
		addRe(m.Regions[i].before)
	}
	prompts := map[string]bool{}
	var fold *spinnerFold
	folded := -1 // the sets fold was made of
	for i := range m.Rules {
		r := &m.Rules[i]
		for _, c := range append([]*Condition{&r.cond}, ptrs(r.Also)...) {
			for _, p := range c.match {
				addRe(p.re)
			}
			for _, p := range c.unless {
				addRe(p.re)
			}
		}
		if p := m.Prompts[r.Prompt]; p != nil && !prompts[r.Prompt] {
			prompts[r.Prompt] = true
			addRe(p.question)
			addRe(p.option)
			addRe(p.continuation)
			addRe(p.reject)
		}
		if broken {
			m.ruleAt, m.folds = nil, nil
			return
		}
		if sets != folded {
			fold, folded = foldOf(candidates, in), sets
		}
		m.folds[i] = fold
		m.ruleAt[m.Name+"."+r.ID] = i
	}
}

// foldOf groups the candidates by their signature: what the rules' own
// rune tests say of each, and the sets that hold it (in).
func foldOf(candidates []rune, in map[rune][]int) *spinnerFold {
	groups := map[string][]rune{}
	for _, r := range candidates {
		var b strings.Builder
		b.WriteString(itoa(runeWidth(r)))
		if unicode.IsSpace(r) || strings.ContainsRune(uprightBorders, r) {
			b.WriteByte('!')
		}
		for _, i := range in[r] {
			b.WriteByte(' ')
			b.WriteString(itoa(i))
		}
		groups[b.String()] = append(groups[b.String()], r)
	}
	f := &spinnerFold{rep: map[rune]rune{}}
	for _, g := range groups {
		if len(g) < 2 {
			continue // alike with no other: it folds to nothing
		}
		for _, r := range g {
			f.rep[r] = g[0]
		}
	}
	return f
}

// runeSets calls add with every literal rune and character class in re,
// as ranges in pairs.
func runeSets(re *syntax.Regexp, add func(ranges []rune)) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			set := []rune{r, r}
			if re.Flags&syntax.FoldCase != 0 {
				// The rune and every case of it.
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					set = append(set, f, f)
				}
			}
			add(set)
		}
	case syntax.OpCharClass:
		add(re.Rune)
	}
	for _, s := range re.Sub {
		runeSets(s, add)
	}
}

// Spinners is the spinner glyphs a verdict's rules cannot tell apart
// (Manifest.SpinnerBlind).
type Spinners struct{ f *spinnerFold }

// Alike says whether glyphs a and b, a ≠ b, may stand for each other.
func (s Spinners) Alike(a, b rune) bool {
	if s.f == nil {
		return false
	}
	fa, ok := s.f.rep[a]
	if !ok {
		return false
	}
	fb, ok := s.f.rep[b]
	return ok && fa == fb
}

// rule is the index of the rule whose verdict v (one m.Classify gave)
// is, or -1: -1 for idle, as then the generic reader read the screen too
// (evaluate), and for a verdict of the generic reader's.
func (m *Manifest) rule(v Verdict) int {
	if v.Agent != m.Name || v.State == StateIdle || GenericReader(v.Reason) {
		return -1
	}
	if i, ok := m.ruleAt[v.Reason]; ok {
		return i
	}
	return -1
}

// CursorBlind says whether v, the verdict m.Classify gave a screen, is
// also the verdict of every screen that differs from it only in the
// cursor (its row, column and visibility): it is a rule's, no rule reads
// the cursor, and the generic reader, which does, did not run.
func (m *Manifest) CursorBlind(v Verdict) bool { return m.rule(v) >= 0 }

// SpinnerBlind says whether v, the verdict m.Classify gave a screen, is
// also the verdict of every screen that differs from it only in spinner
// glyphs alike (the Spinners it returns), in its rows or its title, and
// in its rows' styles (which the rules read only in a prompt); and if so,
// which glyphs are alike. It never holds for a verdict with a prompt:
// what a person approves is read afresh from the screen every time. Nor
// for a Message (an error's words) with a spinner glyph in it, which
// would change with the glyph. Its Evidence may name the glyphs as they
// were: only a client that asks for the verdict itself reads it, and that
// reads the screen afresh.
func (m *Manifest) SpinnerBlind(v Verdict) (Spinners, bool) {
	i := m.rule(v)
	if i < 0 || v.Prompt != nil || strings.ContainsFunc(v.Message, isSpinnerRune) {
		return Spinners{}, false
	}
	return Spinners{m.folds[i]}, true
}

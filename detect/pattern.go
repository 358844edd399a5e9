package detect

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// pattern is a rule pattern with literals one of which every match must
// contain. Most rules fail on most screens; strings.Contains rules them out
// far faster than running the regular expression over a whole region.
type pattern struct {
	re *regexp.Regexp
	// need lists literals; every match contains at least one of them.
	// Empty means no prefilter.
	need []string
}

func newPattern(re *regexp.Regexp) pattern {
	p := pattern{re: re}
	if tree, err := syntax.Parse(re.String(), syntax.Perl); err == nil {
		p.need = requiredLiterals(tree.Simplify())
	}
	return p
}

// maxClassRunes bounds how small a character class must be to serve as a
// set of required one-rune literals.
const maxClassRunes = 8

// requiredLiterals finds literals one of which every match of re contains,
// preferring the set whose shortest member is longest; nil when there is
// none worth checking.
func requiredLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpCharClass:
		// re.Rune holds ranges as pairs; take only small sets of runes.
		var lits []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] >= maxClassRunes {
				return nil
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				lits = append(lits, string(r))
			}
		}
		if len(lits) == 0 || len(lits) > maxClassRunes {
			return nil
		}
		return lits
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []string
		for _, sub := range re.Sub {
			if l := requiredLiterals(sub); l != nil && shortest(l) > shortest(best) {
				best = l
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			l := requiredLiterals(sub)
			if l == nil {
				return nil // one branch needs nothing: neither does the whole
			}
			all = append(all, l...)
		}
		return all
	}
	return nil
}

// shortest is the byte length of the shortest literal (0 for none).
func shortest(lits []string) int {
	if len(lits) == 0 {
		return 0
	}
	n := len(lits[0])
	for _, l := range lits[1:] {
		n = min(n, len(l))
	}
	return n
}

func (p pattern) excluded(s string) bool {
	if len(p.need) == 0 {
		return false
	}
	for _, l := range p.need {
		if strings.Contains(s, l) {
			return false
		}
	}
	return true
}

func (p pattern) FindStringIndex(s string) []int {
	if p.excluded(s) {
		return nil
	}
	return p.re.FindStringIndex(s)
}

func (p pattern) MatchString(s string) bool {
	if p.excluded(s) {
		return false
	}
	return p.re.MatchString(s)
}

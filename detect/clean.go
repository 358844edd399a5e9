package detect

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanText makes text that an agent, a model or a repository wrote safe
// to show anywhere: terminal escapes and control characters are dropped
// (newlines kept, tabs made spaces), invisible format characters (bidi
// overrides, zero-width joiners and spaces: Trojan Source) are shown as
// ⟨U+202E⟩, anything shaped like a secret is redacted, and with max > 0
// the result is at most max runes, "…" marking a cut. cut says whether
// anything was left out for length.
func CleanText(s string, max int) (clean string, cut bool) {
	if s == "" {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b:
			i += escapeLen(s[i:])
			continue
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteString("    ")
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			// C0 and C1 controls: a terminal would act on them.
		case unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	clean = Redact(b.String())
	if max > 0 && utf8.RuneCountInString(clean) > max {
		runes := []rune(clean)
		clean, cut = string(runes[:max-1])+"…", true
	}
	return clean, cut
}

// escapeLen is the length of the escape sequence at the start of s (which
// begins with ESC): CSI up to its final byte, OSC/DCS/APC/PM/SOS up to BEL
// or ST, otherwise ESC and the byte after it.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
		return len(s)
	case ']', 'P', '_', '^', 'X':
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return len(s)
	}
	_, n := utf8.DecodeRuneInString(s[1:])
	return 1 + n
}

// Redacted replaces a secret.
const Redacted = "[redacted]"

// secretShapes are the shapes of credentials agentd will not pass on: the
// vendors' documented key prefixes, bearer tokens, private key blocks, a
// password in a URL, and the value of a variable whose name says it holds a
// secret. Group "keep", where present, is kept before the redaction.
var secretShapes = []*regexp.Regexp{
	regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\z)`),
	regexp.MustCompile(`(?i)(?P<keep>\b[A-Z0-9_.-]*(?:api[_-]?key|access[_-]?key|secret(?:[_-]?key)?|token|passw(?:or)?d|passwd|pwd|credentials?)["']?\s*[:=]\s*["']?)[^\s"',;]{6,}`),
	regexp.MustCompile(`(?i)(?P<keep>\b(?:bearer|basic)\s+)[A-Za-z0-9_\-.=+/]{12,}`),
	regexp.MustCompile(`(?P<keep>://[^/\s:@]+:)[^/\s@]+@`),
	regexp.MustCompile(`\bsk-[A-Za-z0-9_\-.…]{8,}`),                                     // OpenAI, Anthropic (and "sk-ant-...abcd" as Claude shows one)
	regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`), // GitHub
	regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`),                                 // AWS access key ids
	regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`),                               // Slack
	regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{30,}`),                                     // Google API keys
	regexp.MustCompile(`\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}`),                        // Stripe
	regexp.MustCompile(`\bglpat-[0-9A-Za-z_\-]{20,}`),                                   // GitLab
	regexp.MustCompile(`\bnpm_[0-9A-Za-z]{30,}`),                                        // npm
	regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`),  // JWTs
}

// Redact replaces everything in s that is shaped like a secret.
func Redact(s string) string {
	for _, re := range secretShapes {
		if !re.MatchString(s) {
			continue
		}
		keep := re.SubexpIndex("keep")
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			if keep > 0 {
				if g := re.FindStringSubmatch(m); g != nil && g[keep] != "" {
					if strings.HasSuffix(g[keep], ":") && strings.HasPrefix(g[keep], "://") {
						return g[keep] + Redacted + "@"
					}
					return g[keep] + Redacted
				}
			}
			return Redacted
		})
	}
	return s
}

// Seal cleans what the prompt shows (question, options, subject) and sets
// its ID from what is left: every prompt agentd reports is sealed once,
// where it is made.
func (p *Prompt) Seal() {
	p.Question, _ = CleanText(p.Question, 500)
	for i := range p.Options {
		o := &p.Options[i]
		o.Label, _ = CleanText(o.Label, 300)
		o.Description, _ = CleanText(o.Description, 300)
	}
	if p.Subject != nil {
		p.Subject.Clean()
	}
	p.Content = Fingerprint(p)
	p.ID = p.Content
}

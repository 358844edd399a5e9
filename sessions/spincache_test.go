package sessions

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions/term"
)

// look is a screen a session classified, after write Write.
type look struct {
	Write  int
	Screen detect.Screen
}

// classifiedScreens is every screen a live session would classify while
// writes play, in order: Simulate's loop (the pump's timing, the
// decision's second looks), keeping each screen it decides on.
func classifiedScreens(m *detect.Manifest, cols, rows int, writes [][]byte, gaps []time.Duration) []look {
	t := term.New(term.Options{Cols: cols, Rows: rows})
	d := NewDecider(m)
	var out []look
	onPumpTiming(t, writes, gaps, func(write int, at time.Duration) time.Duration {
		sc := t.Snapshot()
		out = append(out, look{write, sc})
		_, again := d.decide(sc, at)
		return again
	})
	return out
}

// corpusScreens calls fn with the screens classified in every committed
// recording (fixtures/*/*/sessions), played as TestLiveDecisionIsSimulated
// plays them.
func corpusScreens(t testing.TB, fn func(name string, m *detect.Manifest, looks []look)) {
	t.Helper()
	eachRecording(t, func(name string, m *detect.Manifest, rec recording.Session, writes [][]byte, gaps []time.Duration) {
		fn(name, m, classifiedScreens(m, rec.Cols, rec.Rows, writes, gaps))
	})
}

// recordingLooks plays the recording f (its .json) as corpusScreens does;
// m is nil for an agent with no rules.
func recordingLooks(t testing.TB, rules *detect.Set, f string) (*detect.Manifest, []look) {
	t.Helper()
	m, rec, writes, gaps := readRecording(t, rules, f)
	if m == nil {
		return nil, nil
	}
	return m, classifiedScreens(m, rec.Cols, rec.Rows, writes, gaps)
}

// A verdict the cache carries to a screen other than the one it was read
// from is the verdict the rules read on that screen. Over every screen
// classified in every recording, on the pump's timing:
//   - where the cache stands by its verdict without the rules (a cursor
//     move, a spinner's turn), the rules are run all the same and must say
//     the same, in everything a session or a client reads of it (the
//     Evidence's text alone may name a glyph as it was);
//   - the fold itself, beyond the changes the recordings happen to hold:
//     a glyph a manifest folds may stand for any glyph alike with it,
//     anywhere on a screen, so every distinct screen whose verdict
//     outlasts spinners (SpinnerBlind) is read again with each glyph
//     swapped for the first, then the last, rune alike with it (spinner
//     glyphs and ASCII are tried), and must read the same.
func TestVerdictCacheSound(t *testing.T) {
	var pool []rune
	for r := rune(0x20); r < 0x7f; r++ {
		pool = append(pool, r)
	}
	for r := rune(0x80); r < 0x3000; r++ {
		if detect.SpinnerGlyph(r) {
			pool = append(pool, r)
		}
	}
	checked, swapped := map[reuse]int{}, 0
	corpusScreens(t, func(name string, m *detect.Manifest, looks []look) {
		bad := 0
		fail := func(i int, format string, args ...any) bool {
			t.Errorf("%s: write %d (look %d): "+format, append([]any{name, looks[i].Write, i}, args...)...)
			if bad++; bad == 3 {
				t.Errorf("%s: more left out", name)
				return true
			}
			return false
		}
		var c verdictCache
		for i, l := range looks {
			sc := l.Screen
			v, why := c.lookup(m, sc)
			if why == reuseNone {
				c.store(m, sc, m.Classify(sc))
				continue
			}
			if why == reuseSame {
				continue // the same screen: the rules are pure
			}
			checked[why]++
			if d := verdictDiff(m, v, m.Classify(sc)); d != "" && fail(i, "%s, the cached verdict is not the rules': %s", why, d) {
				return
			}
		}
		// partners[sp][r]: the first and last rune alike with r in sp,
		// other than r.
		partners := map[detect.Spinners]map[rune][2]rune{}
		partner := func(sp detect.Spinners, r rune) ([2]rune, bool) {
			if partners[sp] == nil {
				partners[sp] = map[rune][2]rune{}
			}
			p, ok := partners[sp][r]
			if !ok {
				for _, q := range pool {
					if q != r && sp.Alike(r, q) {
						if p[0] == 0 {
							p[0] = q
						}
						p[1] = q
					}
				}
				partners[sp][r] = p
			}
			return p, p[0] != 0
		}
		for i, l := range looks {
			sc := l.Screen
			if i > 0 && sameScreen(looks[i-1].Screen, sc) {
				continue
			}
			v := m.Classify(sc)
			sp, ok := m.SpinnerBlind(v)
			if !ok {
				continue
			}
			for side := range 2 {
				found := false
				swap := func(r rune) rune {
					if p, ok := partner(sp, r); ok {
						found = true
						return p[side]
					}
					return r
				}
				alt := sc
				alt.Lines = make([]string, len(sc.Lines))
				for j, l := range sc.Lines {
					alt.Lines[j] = strings.Map(swap, l)
				}
				alt.Title = strings.Map(swap, sc.Title)
				if !found {
					break
				}
				swapped++
				if d := verdictDiff(m, v, m.Classify(alt)); d != "" && fail(i, "its spinner glyphs swapped for others alike: %s", d) {
					return
				}
			}
		}
	})
	if checked[reuseCursor] == 0 || checked[reuseSpinner] == 0 || swapped == 0 {
		t.Fatalf("nothing reused (%v) or swapped (%d): nothing was checked", checked, swapped)
	}
	t.Logf("checked %d verdicts kept over a cursor move, %d over a spinner's turn; %d screens read with their glyphs swapped",
		checked[reuseCursor], checked[reuseSpinner], swapped)
}

func (r reuse) String() string {
	return [...]string{"none", "same screen", "cursor moved", "spinner turned"}[r]
}

// verdictDiff says how verdict got differs from the rules' want, "" when in
// nothing but the glyphs its Evidence names.
func verdictDiff(m *detect.Manifest, got, want detect.Verdict) string {
	sp, _ := m.SpinnerBlind(got)
	if got.Evidence.Region != want.Evidence.Region || got.Evidence.Text != want.Evidence.Text && !spinnersAlike(sp, got.Evidence.Text, want.Evidence.Text) {
		return fmt.Sprintf("evidence %+v, the rules' %+v", got.Evidence, want.Evidence)
	}
	got.Evidence, want.Evidence = detect.Evidence{}, detect.Evidence{}
	switch {
	case reflect.DeepEqual(got, want):
		return ""
	case got.Prompt != nil && want.Prompt != nil && !reflect.DeepEqual(*got.Prompt, *want.Prompt):
		prompt := func(p *detect.Prompt) string {
			s := fmt.Sprintf("%q options %+v", p.Question, p.Options)
			if p.Subject != nil {
				s += fmt.Sprintf(" subject %+v", *p.Subject)
			}
			return s
		}
		return fmt.Sprintf("%s: prompt %s, the rules' %s", got.Reason, prompt(got.Prompt), prompt(want.Prompt))
	}
	return fmt.Sprintf("%s %s %q prompt %v, the rules' %s %s %q prompt %v", got.State, got.Reason, got.Message, got.Prompt != nil,
		want.State, want.Reason, want.Message, want.Prompt != nil)
}

// TestMeasureScreenChanges counts, over the corpus, how each classified
// screen differs from the one classified before it, and what the verdict
// cache makes of it (go test -v -run TestMeasureScreenChanges ./sessions/).
func TestMeasureScreenChanges(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("a measurement: run with -v")
	}
	type counts struct {
		looks, kinds [6]int   // by kindOf
		moved        [6]int   // of kinds, the cursor moved too
		reused       [4]int   // by reuse
		missed       [6]int   // of kinds, not reused
		why          []string // why a cursor or spinner change was not reused
	}
	all := map[string]*counts{}
	whyNot := map[string]int{}
	corpusScreens(t, func(name string, m *detect.Manifest, looks []look) {
		n := all[m.Name]
		if n == nil {
			n = &counts{}
			all[m.Name] = n
		}
		var c verdictCache
		for i, l := range looks {
			sc := l.Screen
			k, moved := kindFirst, false
			if i > 0 {
				k, moved = kindOf(looks[i-1].Screen, sc)
			}
			n.kinds[k]++
			if moved {
				n.moved[k]++
			}
			prev := c.v
			v, why := c.lookup(m, sc)
			n.reused[why]++
			if why == reuseNone {
				v = m.Classify(sc)
				c.store(m, sc, v)
				n.missed[k]++
				if k == kindCursor || k == kindSpinner {
					whyNot[m.Name+" "+k.String()+": "+missReason(m, prev, looks[i-1].Screen, sc)]++
				}
			}
		}
	})
	var total counts
	names := make([]string, 0, len(all))
	for name, n := range all {
		names = append(names, name)
		for k := range n.kinds {
			total.kinds[k] += n.kinds[k]
			total.moved[k] += n.moved[k]
			total.missed[k] += n.missed[k]
		}
		for r := range n.reused {
			total.reused[r] += n.reused[r]
		}
	}
	slices.Sort(names)
	sum := 0
	for _, k := range total.kinds {
		sum += k
	}
	pct := func(a int) string { return fmt.Sprintf("%6d %5.1f%%", a, 100*float64(a)/float64(sum)) }
	t.Logf("%d classifications over the corpus; each screen against the one classified before it:", sum)
	t.Logf("  %-40s %13s  %-13s %s", "", "screens", "cursor also", "reused now")
	for k := kindFirst; k <= kindOther; k++ {
		t.Logf("  %-40s %13s  %-13d %d", k, pct(total.kinds[k]), total.moved[k], total.kinds[k]-total.missed[k])
	}
	t.Logf("the cache: %s same screen, %s cursor moved, %s spinner turned; rules run %s",
		pct(total.reused[reuseSame]), pct(total.reused[reuseCursor]), pct(total.reused[reuseSpinner]), pct(total.reused[reuseNone]))
	t.Logf("  %-12s %6s %6s %6s %6s %6s %6s | %6s %6s %6s | %s", "agent", "looks", "same", "(a)", "(b)", "(c)", "(d)",
		"cursor", "spin", "run", "rules run before → now")
	for _, name := range names {
		n := all[name]
		looks := 0
		for _, k := range n.kinds {
			looks += k
		}
		before := looks - n.kinds[kindSame]
		t.Logf("  %-12s %6d %6d %6d %6d %6d %6d | %6d %6d %6d | %5.1f%% → %5.1f%%", name, looks, n.kinds[kindSame],
			n.kinds[kindCursor], n.kinds[kindSpinner], n.kinds[kindDigits], n.kinds[kindOther]+n.kinds[kindFirst],
			n.reused[reuseCursor], n.reused[reuseSpinner], n.reused[reuseNone],
			100*float64(before)/float64(looks), 100*float64(n.reused[reuseNone])/float64(looks))
	}
	var ws []string
	for w := range whyNot {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b string) int { return whyNot[b] - whyNot[a] })
	t.Logf("cursor or spinner changes the cache did not reuse:")
	for _, w := range ws {
		t.Logf("  %6d %s", whyNot[w], w)
	}
}

// changeKind is how a screen differs from the one classified before it.
type changeKind int

const (
	kindFirst   changeKind = iota // a recording's first screen
	kindSame                      // nothing (sameScreen)
	kindCursor                    // the cursor alone
	kindSpinner                   // spinner glyphs (detect.SpinnerGlyph) turned, the cursor perhaps moved
	kindDigits                    // digits, perhaps spinner glyphs and the cursor too
	kindOther                     // anything else
)

func (k changeKind) String() string {
	return [...]string{"(a recording's first)", "same (a hit today)", "(a) only the cursor", "(b) spinner glyphs (+ cursor)",
		"(c) digits (+ spinner glyphs, cursor)", "(d) other"}[k]
}

// kindOf says how b differs from a, and whether its cursor moved.
func kindOf(a, b detect.Screen) (changeKind, bool) {
	moved := a.CursorRow != b.CursorRow || a.CursorCol != b.CursorCol || a.CursorVisible != b.CursorVisible
	if sameScreen(a, b) {
		return kindSame, false
	}
	if !sameFields(a, b) {
		return kindOther, moved
	}
	spin, digits := false, false
	// rows compares text and styles glyph by glyph: a style may change
	// only where its glyph did.
	rows := func(la, lb, sa, sb string) bool {
		if la == lb && sa == sb {
			return true
		}
		ra, rb := []rune(la), []rune(lb)
		if len(ra) != len(rb) || len(sa) != len(sb) {
			return false
		}
		for j := range ra {
			x, y := ra[j], rb[j]
			switch {
			case x == y:
				if j < len(sa) && sa[j] != sb[j] {
					return false
				}
			case detect.SpinnerGlyph(x) && detect.SpinnerGlyph(y):
				spin = true
			case unicode.IsDigit(x) && unicode.IsDigit(y):
				digits = true
			default:
				return false
			}
		}
		return true
	}
	if !rows(a.Title, b.Title, "", "") {
		return kindOther, moved
	}
	for i := range a.Lines {
		if !rows(a.Lines[i], b.Lines[i], a.Styles[i], b.Styles[i]) {
			return kindOther, moved
		}
	}
	switch {
	case digits:
		return kindDigits, moved
	case spin:
		return kindSpinner, moved
	}
	return kindCursor, moved
}

// missReason says why the cache ran the rules for b, which differs from a
// only in the cursor or in spinner glyphs; v is a's verdict.
func missReason(m *detect.Manifest, v detect.Verdict, a, b detect.Screen) string {
	switch {
	case v.Prompt != nil && !m.CursorBlind(v):
		return "a prompt of the generic reader's"
	case v.Prompt != nil:
		return "a prompt (" + v.Reason + ")"
	case !m.CursorBlind(v):
		return "idle or the generic reader's (" + v.State + ")"
	case !slices.Equal(a.Lines, b.Lines) || a.Title != b.Title:
		return "glyphs the rules tell apart"
	}
	return "styles"
}

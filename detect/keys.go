package detect

import (
	"fmt"
	"strconv"
	"strings"
)

// Answer templates say which keys choose an option. A template is literal
// text with two kinds of placeholder:
//
//	{id} {key} {i} {n} {count}   the option's id, its key hint (a key name
//	                             such as "esc" becomes that key), its 0-based
//	                             and 1-based index, the number of options
//	{key|id}                     the key hint where the row shows one, else
//	                             the id: a menu whose digits choose but whose
//	                             last option is "No (Esc)"
//	{down} {up}                  how many rows below / above the selected
//	                             option this one is (0 when it is not)
//	<name> <name*R>              a named key, repeated R times; R is a number
//	                             or one of {i} {n} {count}
//
// Named keys: esc enter tab space backspace up down left right home end
// ctrl-c shift-tab (or shift+tab, as hints write it) lt (a literal '<')
// lbrace (a literal '{').
var namedKeys = map[string]string{
	"esc": "\x1b", "enter": "\r", "tab": "\t", "space": " ", "backspace": "\x7f",
	"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
	"home": "\x1b[H", "end": "\x1b[F", "ctrl-c": "\x03", "lt": "<", "lbrace": "{",
	"shift-tab": "\x1b[Z", "shift+tab": "\x1b[Z",
}

// KeyName returns the bytes of a named key.
func KeyName(name string) (string, bool) {
	k, ok := namedKeys[strings.ToLower(name)]
	return k, ok
}

type keyToken struct {
	literal string // when not a placeholder
	field   string // id, key, i, n, count
	key     string // named key bytes
	repeat  string // number or field for <name*R>
}

type keyTemplate []keyToken

type keyContext struct {
	id, key      string
	index, count int
	selected     int // index of the option marked selected, 0 when none is
}

func parseKeys(t string) (keyTemplate, error) {
	var out keyTemplate
	for len(t) > 0 {
		switch t[0] {
		case '{':
			end := strings.IndexByte(t, '}')
			if end < 0 {
				return nil, fmt.Errorf("unclosed '{' in %q", t)
			}
			f := t[1:end]
			if !isField(f) {
				return nil, fmt.Errorf("unknown placeholder {%s}: want {id}, {key}, {key|id}, {i}, {n}, {count}, {down} or {up}", f)
			}
			out = append(out, keyToken{field: f})
			t = t[end+1:]
		case '<':
			end := strings.IndexByte(t, '>')
			if end < 0 {
				return nil, fmt.Errorf("unclosed '<' in %q", t)
			}
			name, rep, _ := strings.Cut(t[1:end], "*")
			k, ok := KeyName(name)
			if !ok {
				return nil, fmt.Errorf("unknown key <%s>", name)
			}
			if rep != "" {
				f := strings.Trim(rep, "{}")
				if _, err := strconv.Atoi(rep); err != nil && !isField(f) {
					return nil, fmt.Errorf("repeat %q in <%s>: want a number or a placeholder such as {i}", rep, t[1:end])
				}
			}
			out = append(out, keyToken{key: k, repeat: rep})
			t = t[end+1:]
		default:
			i := strings.IndexAny(t, "{<")
			if i < 0 {
				i = len(t)
			}
			out = append(out, keyToken{literal: t[:i]})
			t = t[i:]
		}
	}
	return out, nil
}

func isField(f string) bool {
	switch f {
	case "id", "key", "key|id", "i", "n", "count", "down", "up":
		return true
	}
	return false
}

func (c keyContext) field(f string) string {
	switch f {
	case "id":
		return c.id
	case "key":
		if k, ok := KeyName(c.key); ok {
			return k
		}
		return c.key
	case "key|id":
		if c.key != "" {
			return c.field("key")
		}
		return c.id
	case "i":
		return strconv.Itoa(c.index)
	case "n":
		return strconv.Itoa(c.index + 1)
	case "count":
		return strconv.Itoa(c.count)
	case "down":
		return strconv.Itoa(max(c.index-c.selected, 0))
	case "up":
		return strconv.Itoa(max(c.selected-c.index, 0))
	}
	return ""
}

// positional reports whether the template repeats a key by an option's
// place, which assumes the selection is where the prompt put it.
func (t keyTemplate) positional() bool {
	for _, tok := range t {
		if tok.repeat != "" {
			if _, err := strconv.Atoi(tok.repeat); err != nil {
				return true
			}
		}
	}
	return false
}

// stepsSelection reports whether the template's only repeated keys are
// counted from the selected option ({down}, {up}): each of them moves the
// selection one row toward the option.
func (t keyTemplate) stepsSelection() bool {
	steps := false
	for _, tok := range t {
		switch tok.repeat {
		case "":
		case "{down}", "{up}":
			steps = true
		default:
			return false
		}
	}
	return steps
}

// expand returns the keys for one option, or "" when a placeholder it needs
// is empty (no key hint on the row): such an option cannot be answered.
func (t keyTemplate) expand(c keyContext) string {
	var b strings.Builder
	for _, tok := range t {
		switch {
		case tok.field != "":
			v := c.field(tok.field)
			if v == "" || tok.field == "key" && c.key == "" {
				return ""
			}
			b.WriteString(v)
		case tok.key != "":
			n := 1
			if tok.repeat != "" {
				r := tok.repeat
				if f := strings.Trim(r, "{}"); f != r {
					r = c.field(f)
				}
				n, _ = strconv.Atoi(r)
			}
			b.WriteString(strings.Repeat(tok.key, max(n, 0)))
		default:
			b.WriteString(tok.literal)
		}
	}
	return b.String()
}

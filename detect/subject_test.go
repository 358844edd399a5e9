package detect_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentd/agentd/detect"
)

// subjectRules is a manifest whose one prompt reads a command between two
// dashed rules under "Bash command", or a path and its diff under "Edit
// file", and says so when it can read neither.
const subjectRules = `name = "s"
[[region]]
name = "prompt"
bottom = 40
after = '^─{10,}\s*$'
[[rule]]
id = "menu"
state = "blocked"
region = "prompt"
match = ['^\s*❯\s*\d+\.\s+\S']
prompt = "menu"
[prompt.menu]
kind = "permission"
question = '^\s*(\S.*\?)\s*$'
option = '^\s*(?:❯\s*)?(?P<id>\d+)\.\s+(?P<label>\S.*?)\s*$'
keys = "{id}"
subject_required = true
[[prompt.menu.subject]]
kind = "command"
when = '^\s*Bash command\s*$'
from = '^\s*╌{10,}\s*$'
to = '^\s*╌{10,}\s*$'
[[prompt.menu.subject]]
kind = "edit"
when = '^\s*Edit file\s*$'
text = '^\s*(?P<text>\S+)\s*$'
from = '^\s*╌{10,}\s*$'
to = '^\s*╌{10,}\s*$'
elided = '^\s*… \+\d+ lines\s*$'
[[prompt.menu.subject]]
kind = "command"
when = '^\s*Run this\?\s*$'
text = '^\s*\$ (?P<text>.*)$'
text_more = '^\s*(?P<text>\S.*)$'
first = '^\s*(?:Reason:|\$ )'
elided = '^\s*\[… \d+ lines\]'
[[prompt.menu.subject]]
kind = "edit"
when = '^\s*Make these edits\?\s*$'
text = '^\s*Destination: (?P<text>\S.*)$'
truncated = true
[[prompt.menu.subject]]
kind = "tool"
when = '^\s*Run tool "(\w+)"\?\s*$'
text = '^\s*Run tool "(?P<text>\w+)"\?'
first = '^\s*\w+: '
cut = '\.\.\.$'
[[prompt.menu.subject]]
kind = "write"
when = '^\s*Save: '
text = '^\s*Save: (?P<text>\S.*)$'
text_more = '^\s{7}(?P<text>\S.*)$'
text_join = ""
[[prompt.menu.subject]]
kind = "command"
when = '^\s*Run bash command\('
text = '^\s*Run bash command\((?P<text>.*)$'
text_more = '^ {3,}(?P<text>\S.*)$'
text_trim = '\)$'
[[prompt.menu.subject]]
kind = "tool"
when = '^\s*\?\s+\S'
text = '^\s*\?\s+(?P<text>\S.*?)\s*$'
elided = '…\s*$'
`

func subjectManifest(t *testing.T) *detect.Manifest {
	t.Helper()
	m, err := detect.ParseManifest("subject.toml", []byte(subjectRules))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func promptOn(t *testing.T, m *detect.Manifest, rows ...string) *detect.Prompt {
	t.Helper()
	v := m.Classify(detect.ScreenFromText(strings.Join(rows, "\n"), 80, 30))
	if v.State != detect.StateBlocked || v.Prompt == nil {
		t.Fatalf("verdict %s (%s), want blocked", v.State, v.Reason)
	}
	return v.Prompt
}

const rule = "────────────────────────────────────────────────────────────────────────────────"
const dashes = " ╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌╌"

var menu = []string{" Do you want to proceed?", " ❯ 1. Yes", "   2. No"}

func TestSubjectCommand(t *testing.T) {
	m := subjectManifest(t)
	p := promptOn(t, m, append([]string{rule, " Bash command", " Create made.txt", dashes,
		"  for f in a b; do", "    touch $f", "  done", dashes}, menu...)...)
	want := detect.Subject{Kind: "command", Text: "for f in a b; do touch $f done", Detail: "for f in a b; do\n  touch $f\ndone"}
	checkSubjectIs(t, p.Subject, want)
}

// Rows read through a line pattern keep their indentation past what they
// share: a nested command stays nested once its box's borders are gone.
func TestSubjectLineKeepsIndentation(t *testing.T) {
	src := strings.Replace(subjectRules, "to = '^\\s*╌{10,}\\s*$'\n[[prompt.menu.subject]]\nkind = \"edit\"", "to = '^\\s*╌{10,}\\s*$'\nline = '^\\s*│(?P<line>.*?)│\\s*$'\n[[prompt.menu.subject]]\nkind = \"edit\"", 1)
	if src == subjectRules {
		t.Fatal("the command reader was not found to add a line pattern to")
	}
	m, err := detect.ParseManifest("subject.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p := promptOn(t, m, append([]string{rule, " Bash command", dashes,
		" │ for f in a b; do   │", " │   touch $f         │", " │ done               │", dashes}, menu...)...)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "command", Text: "for f in a b; do touch $f done", Detail: "for f in a b; do\n  touch $f\ndone"})
}

func TestSubjectEditWithElidedDiff(t *testing.T) {
	m := subjectManifest(t)
	p := promptOn(t, m, append([]string{rule, " Edit file", " notes.txt", dashes,
		"  1 -one", "  1 +two", "  … +12 lines", dashes}, menu...)...)
	want := detect.Subject{Kind: "edit", Text: "notes.txt", Detail: "1 -one\n1 +two", Truncated: true}
	checkSubjectIs(t, p.Subject, want)
}

// A command under its reason: the text is the whole command on one line,
// its rows below the "$ " row too, a blank row inside it passed over; the
// detail keeps the reason and the rows.
func TestSubjectTextGoesOn(t *testing.T) {
	m := subjectManifest(t)
	p := promptOn(t, m, append([]string{rule, " Run this?", "", " Reason: make a list", "",
		" $ for f in a b; do", "   echo $f", "", " done", ""}, menu...)...)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "command", Text: "for f in a b; do echo $f done",
		Detail: "Reason: make a list\n\n$ for f in a b; do\n  echo $f\n\ndone"})
}

// A command the agent cut ("[… 9 lines]"): the text goes on past the
// elided row's place no further, and says it is cut.
func TestSubjectTextGoesOnElided(t *testing.T) {
	m := subjectManifest(t)
	p := promptOn(t, m, append([]string{rule, " Run this?", " $ cat <<EOF", " row 1", " [… 9 lines] ^a view all"}, menu...)...)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "command", Text: "cat <<EOF row 1", Detail: "$ cat <<EOF\nrow 1", Truncated: true})
}

// A reader of a layout that shows only part of its subject (a patch whose
// diff scrolled off, read from the path under the question) says so.
func TestSubjectReaderTruncated(t *testing.T) {
	m := subjectManifest(t)
	p := promptOn(t, m, append([]string{rule, "    12 +row", " Make these edits?", " Destination: /w/big.txt", ""}, menu...)...)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "edit", Text: "/w/big.txt", Truncated: true})
}

// A tool's arguments, one cut short by the agent ("..."): the row stays in
// the detail and the subject says it is cut.
func TestSubjectCutRow(t *testing.T) {
	m := subjectManifest(t)
	p := promptOn(t, m, append([]string{rule, ` Run tool "save_note"?`, "", " body: Milk, eggs and...", " title: Groceries", ""}, menu...)...)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "tool", Text: "save_note", Detail: "body: Milk, eggs and...\ntitle: Groceries", Truncated: true})
}

// A path broken at the edge in the middle of a word reads whole with
// text_join = "".
func TestSubjectTextJoin(t *testing.T) {
	m := subjectManifest(t)
	p := promptOn(t, m, append([]string{rule, " Save: notes/a-long-folder/and-a-na", "       rrow-name.txt", ""}, menu...)...)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "write", Text: "notes/a-long-folder/and-a-narrow-name.txt"})
}

// A command closed by the heading's ")" reads without it, on one row or on
// several; its own ")" stays.
func TestSubjectTextTrim(t *testing.T) {
	m := subjectManifest(t)
	p := promptOn(t, m, append([]string{rule, " Run bash command(for f in a b; do", "    touch $(basename $f)", "   done)", "  ⎿ Requesting"}, menu...)...)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "command", Text: "for f in a b; do touch $(basename $f) done"})
	p = promptOn(t, m, append([]string{rule, " Run bash command(echo $(date))", "  ⎿ Requesting"}, menu...)...)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "command", Text: "echo $(date)"})
}

// A one-row heading the agent cut short ("…") is read as it is, marked
// truncated; one that fits is not.
func TestSubjectTextRowCutShort(t *testing.T) {
	m := subjectManifest(t)
	p := promptOn(t, m, append([]string{rule, ` ?  deploy (lab MCP Server) {"environment":"stag…`}, menu...)...)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "tool", Text: `deploy (lab MCP Server) {"environment":"stag…`, Truncated: true})
	p = promptOn(t, m, append([]string{rule, ` ?  deploy (lab MCP Server) {"environment":"staging"}`}, menu...)...)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "tool", Text: `deploy (lab MCP Server) {"environment":"staging"}`})
}

// A prompt whose parser always shows a subject, with no reader's row on
// screen (its head scrolled off), says it could not read it.
func TestSubjectRequiredButUnread(t *testing.T) {
	m := subjectManifest(t)
	p := promptOn(t, m, append([]string{rule, "    touch $f", "  done", dashes}, menu...)...)
	if p.Subject == nil || p.Subject.Kind != "other" || p.Subject.Text != "" || !p.Subject.Truncated {
		t.Fatalf("subject %+v, want other, empty, truncated", p.Subject)
	}
}

// Two prompts with the same question and options about different commands
// are different prompts; the same command wrapped at another width is not.
func TestSubjectIsPartOfThePromptsContent(t *testing.T) {
	m := subjectManifest(t)
	a := promptOn(t, m, append([]string{rule, " Bash command", dashes, "  touch NOTES.md", dashes}, menu...)...)
	b := promptOn(t, m, append([]string{rule, " Bash command", dashes, "  rm -rf ~/projects", dashes}, menu...)...)
	if a.Content == b.Content || a.ID == b.ID {
		t.Fatalf("touch and rm under one question share content %s", a.Content)
	}
	long := promptOn(t, m, append([]string{rule, " Bash command", dashes, "  git commit -am 'one two three'", dashes}, menu...)...)
	wrapped := promptOn(t, m, append([]string{rule, " Bash command", dashes, "  git commit -am 'one two", "  three'", dashes}, menu...)...)
	if long.Content != wrapped.Content {
		t.Fatalf("a command wrapped at another width reads as another prompt: %+v, %+v", long.Subject, wrapped.Subject)
	}
}

func TestSubjectReaderErrorsNameThePlace(t *testing.T) {
	for _, tc := range []struct{ edit, want string }{
		{`kind = "command"`, `kind = "shell"`},
		{`when = '^\s*Bash command\s*$'`, `when = '(('`},
	} {
		src := strings.Replace(subjectRules, tc.edit, tc.want, 1)
		_, err := detect.ParseManifest("subject.toml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "subject.toml:") || !strings.Contains(err.Error(), `prompt "menu": subject 1:`) {
			t.Errorf("%s: error %v, want one naming the file, line, prompt and reader", tc.want, err)
		}
	}
}

// Hostile subjects: whatever an agent, a model or a repository puts in a
// command reaches a person inert, bounded and without secrets.
func TestCleanTextHostile(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"terminal escapes", "rm \x1b[31m-rf\x1b[0m \x1b]0;title\x07x\x1b]8;;http://evil\x1b\\link", "rm -rf xlink"},
		{"controls", "a\rb\x08c\x00d\x7fe\u0085f", "abcdef"},
		{"tabs and newlines", "a\tb\nc", "a    b\nc"},
		{"bidi override (Trojan Source)", "echo safe \u202e;)lmth.x(mr\u202c", "echo safe ⟨U+202E⟩;)lmth.x(mr⟨U+202C⟩"},
		{"zero-width", "r\u200bm -rf /", "r⟨U+200B⟩m -rf /"},
		{"html stays text", "<script>alert(1)</script>", "<script>alert(1)</script>"},
		{"anthropic key", "ANTHROPIC_API_KEY: sk-ant-...jklmnopqrstuvwxyz-AA", "ANTHROPIC_API_KEY: [redacted]"},
		{"bare key", "curl -H x sk-proj-abcdefghijklmnopqrstuvwx", "curl -H x [redacted]"},
		{"github token", "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/x", "git clone https://[redacted]@github.com/x"},
		{"password in url", "psql postgres://app:hunter22@db/x", "psql postgres://app:[redacted]@db/x"},
		{"bearer", "curl -H 'Authorization: Bearer abcdefghijklmnop1234'", "curl -H 'Authorization: Bearer [redacted]'"},
		{"env assignment", "export OPENAI_API_KEY=abc123def456 && run", "export OPENAI_API_KEY=[redacted] && run"},
		{"aws", "aws configure set aws_access_key_id AKIAABCDEFGHIJKLMNOP", "aws configure set aws_access_key_id [redacted]"},
		{"private key", "echo '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----' > k", "echo '[redacted]' > k"},
		{"no false alarm", "npm test -- --max_tokens=4096 && git log --author=ann", "npm test -- --max_tokens=4096 && git log --author=ann"},
	} {
		if got, _ := detect.CleanText(tc.in, 0); got != tc.want {
			t.Errorf("%s: CleanText(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// A 10,000-character command is cut to a bounded text and detail, marked
// truncated, and never split inside a character.
func TestSubjectBounded(t *testing.T) {
	cmd := "echo " + strings.Repeat("é", 10000)
	s := detect.Subject{Kind: "command", Text: cmd, Detail: strings.Repeat(cmd+"\n", 3)}
	s.Clean()
	if !s.Truncated || utf8.RuneCountInString(s.Text) != detect.MaxSubjectText || len(s.Detail) > detect.MaxSubjectDetail {
		t.Fatalf("text %d runes, detail %d bytes, truncated %v: want at most %d runes and %d bytes, truncated", utf8.RuneCountInString(s.Text), len(s.Detail), s.Truncated, detect.MaxSubjectText, detect.MaxSubjectDetail)
	}
	if !utf8.ValidString(s.Text) || !utf8.ValidString(s.Detail) || strings.Contains(s.Text, "\n") {
		t.Fatalf("cut inside a character or text on several lines: %q…", s.Text[:20])
	}
}

func checkSubjectIs(t *testing.T, got *detect.Subject, want detect.Subject) {
	t.Helper()
	if got == nil || got.Kind != want.Kind || got.Text != want.Text || got.Detail != want.Detail || got.Truncated != want.Truncated {
		t.Fatalf("subject %+v, want %+v", got, want)
	}
}

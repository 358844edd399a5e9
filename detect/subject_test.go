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
partial = true
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
cut = '…\s*$'
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

// Rows read through a line pattern between a box's two sides keep their
// indentation past what they share, and lose the padding before the right
// side: a nested command stays nested once its box's borders are gone.
func TestSubjectLineInABoxKeepsIndentation(t *testing.T) {
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

// boxRules reads a prompt drawn the way OpenCode draws one: every row of
// its box starts with "┃", its head at the top ("△ Permission required",
// then "# <title>"), the command below as "$ " and its lines, the options
// on one row; a 42-column sidebar at the right on screens wider than 120.
const boxRules = `name = "box"
[[region]]
name = "box"
after = '^\s*(?:[^┃\s]|$)'
sidebar = 42
sidebar_wider = 120
[[rule]]
id = "permission"
state = "blocked"
region = "box"
match = ['^\s*┃\s+△ Permission required\s*$']
prompt = "permission"
[prompt.permission]
kind = "permission"
question = '^\s*┃ {4}[^\w\s] (\S.*?)\s*$'
option = '(?:┃ {3}| {3})(?P<label>Allow once|Reject)\b'
keys = "<right*{i}><enter>"
subject_required = true
head_first = true
[[prompt.permission.subject]]
kind = "command"
when = '^\s*┃ {4}# \S'
first = '^\s*┃  \$ (?P<line>.*)$'
line = '^\s*┃(?:  (?P<line>.*))?$'
clipped = '\A.*(?:\n.*){8}\z'
`

func boxPrompt(t *testing.T, cols int, rows ...string) *detect.Prompt {
	t.Helper()
	m, err := detect.ParseManifest("box.toml", []byte(boxRules))
	if err != nil {
		t.Fatal(err)
	}
	v := m.Classify(detect.ScreenFromText(strings.Join(rows, "\n"), cols, 30))
	if v.State != detect.StateBlocked || v.Prompt == nil {
		t.Fatalf("verdict %s (%s), want blocked", v.State, v.Reason)
	}
	return v.Prompt
}

// A script's "# comment", two spaces in, is shaped like the box's head:
// with head_first it is neither the question nor where the command starts,
// and the "$ " is left out of the command's first row only.
func TestSubjectHeadFirst(t *testing.T) {
	p := boxPrompt(t, 80, "  ▣  Build", "  ┃", "  ┃  △ Permission required", "  ┃    # Shell command", "  ┃",
		"  ┃  $ for f in a b; do", "  ┃    # one file each", "  ┃    touch $f", "  ┃  done", "  ┃", "  ┃   Allow once   Reject")
	if p.Question != "Shell command" {
		t.Errorf("question %q, want the head's, Shell command", p.Question)
	}
	want := detect.Subject{Kind: "command", Text: "for f in a b; do # one file each touch $f done", Detail: "for f in a b; do\n  # one file each\n  touch $f\ndone"}
	checkSubjectIs(t, p.Subject, want)
}

// A head drawn before its body (the agent did not know the command yet)
// reads nothing: the prompt says it could not read what it approves
// instead of approving an empty command.
func TestSubjectHeadWithoutBody(t *testing.T) {
	p := boxPrompt(t, 80, "  ▣  Build", "  ┃", "  ┃  △ Permission required", "  ┃    # Shell command", "  ┃", "  ┃   Allow once   Reject")
	if p.Subject == nil || p.Subject.Kind != "other" || p.Subject.Text != "" || !p.Subject.Truncated {
		t.Fatalf("subject %+v, want other, empty, truncated", p.Subject)
	}
}

// A box at its full height may have cut the command off without a word:
// clipped marks it truncated.
func TestSubjectClipped(t *testing.T) {
	p := boxPrompt(t, 80, "  ▣  Build", "  ┃", "  ┃  △ Permission required", "  ┃    # Shell command", "  ┃",
		"  ┃  $ echo one", "  ┃  two", "  ┃  three", "  ┃  four", "  ┃  five", "  ┃", "  ┃   Allow once   Reject")
	want := detect.Subject{Kind: "command", Text: "echo one two three four five", Detail: "echo one\ntwo\nthree\nfour\nfive", Truncated: true}
	checkSubjectIs(t, p.Subject, want)
}

// At more than 120 columns a sidebar's words stand on the box's rows; they
// are no part of the question or the command. Where no sidebar is drawn
// (the hints run across its margin), nothing is cut.
func TestSidebarLeftOut(t *testing.T) {
	pad := func(s string, n int) string { return s + strings.Repeat(" ", n-len([]rune(s))) }
	side := func(s, bar string) string { return pad(s, 160) + bar }
	p := boxPrompt(t, 200, pad("", 160)+"Context", "  ┃", side("  ┃  △ Permission required", "LSP"), side("  ┃    # Shell command", "LSPs are disabled"), "  ┃",
		side("  ┃  $ touch made.txt", "/tmp/work"), "  ┃", side("  ┃   Allow once   Reject", "• Kilo 7.7.9"))
	if p.Question != "Shell command" {
		t.Errorf("question %q, want Shell command", p.Question)
	}
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "command", Text: "touch made.txt", Detail: "touch made.txt"})

	long := "touch " + strings.Repeat("x", 170)
	p = boxPrompt(t, 200, "  ┃", "  ┃  △ Permission required", "  ┃    # Shell command", "  ┃",
		"  ┃  $ "+long, "  ┃", pad("  ┃   Allow once   Reject", 150)+"ctrl+f fullscreen  ⇆ select  enter confirm")
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "command", Text: long, Detail: long})
}

// A row that holds only the sidebar's words is empty once the sidebar is
// left out: it does not count among a region's bottom rows.
func TestSidebarRowsAreEmpty(t *testing.T) {
	m, err := detect.ParseManifest("tail.toml", []byte(`name = "tail"
[[region]]
name = "tail"
bottom = 2
sidebar = 42
sidebar_wider = 120
[[rule]]
id = "done"
state = "done"
region = "tail"
match = ['^▣ done\n(?: *\n)* *> *$']
`))
	if err != nil {
		t.Fatal(err)
	}
	side := strings.Repeat(" ", 160)
	s := detect.ScreenFromText(strings.Join([]string{"▣ done", side + "LSP", side + "Memory", " >" + strings.Repeat(" ", 158) + "• Kilo 7.7.9"}, "\n"), 200, 10)
	if v := m.Classify(s); v.State != detect.StateDone {
		t.Fatalf("verdict %s (%s), want done: the sidebar's rows counted among the last two", v.State, v.Reason)
	}
}

// A command whose own lines imitate the box's head ("△ Permission
// required", "# Shell command", "$ echo hi") is read from its real first
// line, whole: the person sees the rm.
func TestSubjectHeadFirstSpoof(t *testing.T) {
	p := boxPrompt(t, 80, "  ▣  Build", "  ┃", "  ┃  △ Permission required", "  ┃    # Shell command", "  ┃",
		"  ┃  $ rm -rf ~/projects", "  ┃  △ Permission required", "  ┃    # Shell command", "  ┃  $ echo hi", "  ┃", "  ┃   Allow once   Reject")
	if p.Question != "Shell command" || p.Subject == nil || !strings.HasPrefix(p.Subject.Text, "rm -rf ~/projects ") || !strings.HasSuffix(p.Subject.Detail, "$ echo hi") {
		t.Fatalf("question %q, subject %+v: want the whole command from its rm", p.Question, p.Subject)
	}
}

// Two layouts under one heading: a reader whose from row is not on screen
// does not apply, and the next reader reads the other layout.
func TestSubjectReaderWithoutItsFromRowDoesNotApply(t *testing.T) {
	src := strings.Replace(subjectRules, "[[prompt.menu.subject]]\nkind = \"edit\"", `[[prompt.menu.subject]]
kind = "command"
when = '^\s*Bash command\s*$'
text = '^   (?P<text>\S.*?)\s*$'
[[prompt.menu.subject]]
kind = "edit"`, 1)
	m, err := detect.ParseManifest("subject.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p := promptOn(t, m, append([]string{rule, " Bash command", "", "   touch made.txt", "   Create made.txt", ""}, menu...)...)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "command", Text: "touch made.txt"})
	if p.Subject.Reader() != "menu.subject[2]" {
		t.Fatalf("read by %s, want menu.subject[2]", p.Subject.Reader())
	}
}

// A reader of what is left of a prompt whose head is off the screen says
// it could not see all of it.
func TestSubjectPartialReaderTruncates(t *testing.T) {
	src := strings.Replace(subjectRules, "subject_required = true\n", `subject_required = true
[[prompt.menu.subject]]
kind = "write"
when = '^\s*Do you want to create \S.*\?\s*$'
text = '^\s*Do you want to create (?P<text>\S.*?)\?\s*$'
partial = true
`, 1)
	m, err := detect.ParseManifest("subject.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p := promptOn(t, m, rule, "  59 line 59", "  60 line 60", dashes, " Do you want to create big.txt?", " ❯ 1. Yes", "   2. No")
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "write", Text: "big.txt", Truncated: true})
}

// A URL broken at the screen's edge is read whole; a word-wrapped text
// joins with a space; a row below a short one is no continuation.
func TestSubjectTextWrapped(t *testing.T) {
	src := strings.Replace(subjectRules, "subject_required = true\n", `subject_required = true
[[prompt.menu.subject]]
kind = "fetch"
when = '^\s*Fetch\s*$'
text = '^ (?:│ )?(?:url|note): (?P<text>\S.*?)\s*$'
text_more = '^ (?:│ )?(?P<text>\S.*?)\s*$'
text_wrapped = true
first = '^ (?:│ )?(?:url|note): '
to = '^\s*╌{10,}\s*$'
line = '^ (?:│ )?(?P<line>.*)$'
`, 1)
	m, err := detect.ParseManifest("subject.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	on := func(rows ...string) *detect.Prompt {
		t.Helper()
		v := m.Classify(detect.ScreenFromText(strings.Join(append(rows, menu...), "\n"), 40, 30))
		if v.Prompt == nil {
			t.Fatalf("verdict %s, want blocked", v.State)
		}
		return v.Prompt
	}
	d := " " + strings.Repeat("╌", 39)
	p := on(strings.Repeat("─", 40), " Fetch", d, " │ url: https://example.com/docs/guides/", " │ install-on-linux?lang=en", " │ prompt: Summarize it", d)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "fetch", Text: "https://example.com/docs/guides/install-on-linux?lang=en",
		Detail: "url: https://example.com/docs/guides/\ninstall-on-linux?lang=en\nprompt: Summarize it"})
	p = on(strings.Repeat("─", 40), " Fetch", d, " │ note: the page the person asked for", " │ yesterday", d)
	if p.Subject.Text != "the page the person asked for yesterday" {
		t.Fatalf("text %q, want the words joined by a space", p.Subject.Text)
	}
	p = on(strings.Repeat("─", 40), " Fetch", d, " │ url: https://example.com/", " │ prompt: Summarize it", d)
	if p.Subject.Text != "https://example.com/" {
		t.Fatalf("text %q: a row under a short one is no continuation", p.Subject.Text)
	}
}

// Rows read through a line pattern (a box's border left out) keep the
// command's own indentation.
func TestSubjectLineKeepsIndentation(t *testing.T) {
	src := strings.Replace(subjectRules, "from = '^\\s*╌{10,}\\s*$'\nto = '^\\s*╌{10,}\\s*$'\n[[prompt.menu.subject]]", "from = '^\\s*╌{10,}\\s*$'\nto = '^\\s*╌{10,}\\s*$'\nline = '^ (?:│(?: |$))?(?P<line>.*)$'\n[[prompt.menu.subject]]", 1)
	if src == subjectRules {
		t.Fatal("no line pattern put in")
	}
	m, err := detect.ParseManifest("subject.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p := promptOn(t, m, append([]string{rule, " Bash command", dashes, " │ for f in a b; do", " │   touch $f", " │", " │ done", dashes}, menu...)...)
	checkSubjectIs(t, p.Subject, detect.Subject{Kind: "command", Text: "for f in a b; do touch $f done", Detail: "for f in a b; do\n  touch $f\n\ndone"})
}

// text_wrapped and text_join say how text_more's rows go on with the text:
// without text_more they are a mistake, said so.
func TestSubjectTextMoreKeysNeedTextMore(t *testing.T) {
	for _, key := range []string{"text_wrapped = true", `text_join = ""`} {
		src := strings.Replace(subjectRules, "elided = '^\\s*… \\+\\d+ lines\\s*$'\n", "elided = '^\\s*… \\+\\d+ lines\\s*$'\n"+key+"\n", 1)
		if src == subjectRules {
			t.Fatal("no key put in")
		}
		if _, err := detect.ParseManifest("subject.toml", []byte(src)); err == nil || !strings.Contains(err.Error(), "without text_more") {
			t.Errorf("%s without text_more: error %v", key, err)
		}
	}
}

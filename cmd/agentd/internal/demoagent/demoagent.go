//go:build unix

// Package demoagent is `agentd demo-agent`: a small scripted coding agent
// for `agentd demo` and the tests, a real program in a real PTY that draws
// the way agents do.
package demoagent

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// demoAgent is a small scripted coding agent for `agentd demo`: a real
// program in a real PTY that draws the way agents do (alternate screen,
// cursor placement, a spinner, a numbered permission menu, a completion
// line), so agentd can be seen at work with no agent installed. A task
// asks about a command ("please run make test" → "make test"; otherwise
// "touch NOTES.md"), or, when it starts with "edit ", about an edit of that
// file, its change drawn as diff rows. It does nothing to the disk.
type demoAgent struct {
	out        io.Writer
	cols, rows int
	transcript []string
	draft      string
	phase      string // idle, thinking, prompt, running
	command    string // what the turn asks to run
	edit       string // the file the turn asks to edit ("edit NOTES.md"), else ""
	spin       int
	started    time.Time
	selected   int
	keys       chan []byte
}

var demoSpinner = []string{"·", "✢", "✳", "✶", "✻", "✽"}

// Run runs the demo agent on stdin (its terminal) and stdout until it is
// told to quit; it returns the exit code.
func Run(stdin *os.File, stdout io.Writer) int {
	if term.IsTerminal(int(stdin.Fd())) {
		old, err := term.MakeRaw(int(stdin.Fd()))
		if err == nil {
			defer term.Restore(int(stdin.Fd()), old)
		}
	}
	a := &demoAgent{out: stdout, cols: 80, rows: 24, phase: "idle", keys: make(chan []byte, 16)}
	if w, h, err := term.GetSize(int(stdin.Fd())); err == nil {
		a.cols, a.rows = w, h
	}
	var pending string // input cut off mid-sequence, waiting for its end
	var escape <-chan time.Time
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := stdin.Read(buf)
			if n > 0 {
				a.keys <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				close(a.keys)
				return
			}
		}
	}()
	fmt.Fprint(a.out, "\x1b[?1049h\x1b]0;agentd demo agent\a\x1b[?2004h")
	defer fmt.Fprint(a.out, "\x1b[?2004l\x1b[?1049l")
	a.transcript = []string{" Welcome to the agentd demo agent. Type a task and press Enter."}
	a.draw()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	for {
		select {
		case k, ok := <-a.keys:
			if !ok {
				return 0
			}
			var keys []string
			keys, pending = splitKeys(pending + string(k))
			for _, key := range keys {
				if quit := a.key(key); quit {
					return 0
				}
			}
			escape = nil
			if pending == "\x1b" {
				// An ESC that ended the read: the Escape key, unless the
				// rest of a sequence follows at once (a terminal's escape time).
				escape = time.After(escapeTime)
			}
		case <-escape:
			escape, pending = nil, ""
			if quit := a.key("\x1b"); quit {
				return 0
			}
		case <-winch:
			if w, h, err := term.GetSize(int(stdin.Fd())); err == nil {
				a.cols, a.rows = w, h
			}
		case <-tick.C:
			if a.phase == "idle" || a.phase == "prompt" {
				continue
			}
			a.spin++
			a.advance()
		}
		a.draw()
	}
}

// splitKeys cuts input into keys: a bracketed paste is one key (its text),
// an escape sequence is one key, anything else one rune each. What is cut
// off mid-way — a paste whose end marker has not come, a sequence without
// its final byte, half a rune — is returned as rest, to be read again with
// the next input: the PTY hands over a paste and the Enter after it split
// wherever its reads fall. A lone ESC at the end is rest too: the caller
// decides, after a moment, that it is the Escape key.
func splitKeys(in string) (keys []string, rest string) {
	for len(in) > 0 {
		switch {
		case strings.HasPrefix(in, "\x1b[200~"):
			body, after, ok := strings.Cut(in[len("\x1b[200~"):], "\x1b[201~")
			if !ok {
				return keys, in
			}
			keys = append(keys, body)
			in = after
		case in == "\x1b":
			return keys, in
		case strings.HasPrefix(in, "\x1b["):
			i := 2
			for i < len(in) && (in[i] < 0x40 || in[i] > 0x7e) {
				i++
			}
			if i == len(in) {
				return keys, in
			}
			keys = append(keys, in[:i+1])
			in = in[i+1:]
		default:
			if !utf8.FullRuneInString(in) {
				return keys, in
			}
			_, size := utf8.DecodeRuneInString(in)
			keys = append(keys, in[:size])
			in = in[size:]
		}
	}
	return keys, ""
}

// escapeTime is how long an ESC at the end of a read waits for the rest of
// a sequence before it counts as the Escape key.
const escapeTime = 25 * time.Millisecond

// key handles one key (or a pasted text); it reports whether to quit.
func (a *demoAgent) key(k string) bool {
	switch a.phase {
	case "idle":
		switch {
		case k == "\x04" && a.draft == "":
			return true
		case k == "\x03":
			return true
		case k == "\r":
			if strings.TrimSpace(a.draft) != "" {
				a.transcript = append(a.transcript, "", " > "+a.draft)
				a.command = demoCommand(a.draft)
				a.edit = demoEdit(a.draft)
				a.draft = ""
				a.phase, a.started, a.spin = "thinking", time.Now(), 0
			}
		case k == "\x7f":
			if a.draft != "" {
				r := []rune(a.draft)
				a.draft = string(r[:len(r)-1])
			}
		case !strings.HasPrefix(k, "\x1b"):
			a.draft += strings.Map(func(r rune) rune {
				if r < 0x20 {
					return -1
				}
				return r
			}, k)
		}
	case "thinking", "running":
		if k == "\x1b" || k == "\x03" {
			a.interrupt()
		}
	case "prompt":
		switch k {
		case "1", "2":
			a.approve()
		case "3", "\x1b":
			a.interrupt()
		case "\x1b[A":
			a.selected = max(a.selected-1, 0)
		case "\x1b[B":
			a.selected = min(a.selected+1, 2)
		case "\r":
			if a.selected == 2 {
				a.interrupt()
			} else {
				a.approve()
			}
		}
	}
	return false
}

// demoCommand is the command a task asks the demo agent for: what follows
// "run " in it ("please run make test"), else adding a notes file. The demo
// only shows it; nothing is run.
func demoCommand(task string) string {
	if _, cmd, ok := strings.Cut(task, "run "); ok && strings.TrimSpace(cmd) != "" {
		return strings.TrimSpace(cmd)
	}
	return "touch NOTES.md"
}

// demoEdit is the file a task asks the demo agent to edit: the word after
// a leading "edit " ("edit NOTES.md"), else "". The demo only shows the
// change; nothing is written.
func demoEdit(task string) string {
	rest, ok := strings.CutPrefix(strings.TrimSpace(task), "edit ")
	if !ok {
		return ""
	}
	if f := strings.Fields(rest); len(f) > 0 {
		return f[0]
	}
	return ""
}

// demoDiff is the change the demo agent proposes to a file it edits: rows
// of a unified diff's body, as agents draw them (context rows start with a
// space, removed rows with "-", added rows with "+").
func demoDiff(path string) []string {
	return []string{
		" # " + path,
		"-TODO: write these notes",
		"+Notes kept by the demo agent.",
		"+(demo: nothing is written)",
		" See README.md for the rest.",
	}
}

func (a *demoAgent) approve() {
	if a.edit != "" {
		a.transcript = append(a.transcript, " ⏺ Update("+a.edit+")", "   ⎿  (demo: nothing was written)")
	} else {
		a.transcript = append(a.transcript, " ⏺ Shell("+a.command+")", "   ⎿  (demo: nothing was run)")
	}
	a.phase, a.spin = "running", 0
}

func (a *demoAgent) interrupt() {
	a.transcript = append(a.transcript, "   ⎿  Interrupted · tell the demo agent what to do instead")
	a.phase = "idle"
}

// advance moves the scripted turn on with time.
func (a *demoAgent) advance() {
	switch {
	case a.phase == "thinking" && a.spin >= 20:
		if a.edit != "" {
			a.transcript = append(a.transcript, " ⏺ I'll edit "+a.edit+".")
		} else {
			a.transcript = append(a.transcript, " ⏺ I'll run "+a.command+".")
		}
		a.phase, a.selected = "prompt", 0
	case a.phase == "running" && a.spin >= 15:
		done := " ⏺ Ran " + a.command + "."
		switch {
		case a.edit != "":
			done = " ⏺ Edited " + a.edit + "."
		case a.command == "touch NOTES.md":
			done = " ⏺ Added NOTES.md."
		}
		a.transcript = append(a.transcript, done, "", fmt.Sprintf("✻ Worked for %ds", int(time.Since(a.started).Seconds()+0.5)))
		a.phase = "idle"
	}
}

// wrap cuts line into rows of at most cols cells at spaces, the rows after
// the first starting with indent. The demo draws every row at its own place,
// so a line left to the terminal's own wrapping would be overwritten by the
// next.
func wrap(line string, cols int, indent string) []string {
	r := []rune(line)
	if cols < len([]rune(indent))+8 || len(r) <= cols {
		return []string{line}
	}
	var out []string
	prefix := ""
	for {
		width := cols - len([]rune(prefix))
		if len(r) <= width {
			return append(out, prefix+string(r))
		}
		cut := width
		for i := width; i > width/2; i-- {
			if r[i] == ' ' {
				cut = i
				break
			}
		}
		out = append(out, prefix+strings.TrimRight(string(r[:cut]), " "))
		r = []rune(strings.TrimLeft(string(r[cut:]), " "))
		prefix = indent
	}
}

func (a *demoAgent) draw() {
	rule := strings.Repeat("─", a.cols)
	var bottom []string
	switch a.phase {
	case "thinking", "running":
		verb := "Thinking…"
		if a.phase == "running" {
			verb = "Running…"
		}
		glyph := demoSpinner[a.spin%len(demoSpinner)]
		bottom = []string{"", fmt.Sprintf("%s %s (%ds · esc to interrupt)", glyph, verb, int(time.Since(a.started).Seconds())), rule, " > ", rule, "  esc to interrupt"}
	case "prompt":
		opts := []string{"Yes", "Yes, and don't ask again this session", "No, and tell the agent what to do differently"}
		if a.edit != "" {
			// An edit: the file, then the change between two dashed rules.
			dashes := strings.Repeat("╌", max(a.cols-4, 10))
			bottom = []string{rule, "  Edit file", "    " + a.edit, "  " + dashes}
			for _, line := range demoDiff(a.edit) {
				bottom = append(bottom, wrap("  "+line, a.cols, "  ")...)
			}
			bottom = append(bottom, "  "+dashes)
		} else {
			bottom = []string{rule, "  Shell command", ""}
			for _, line := range strings.Split(a.command, "\n") {
				bottom = append(bottom, wrap("    "+line, a.cols, "    ")...)
			}
		}
		bottom = append(bottom, "", "  Do you want to proceed?")
		for i, o := range opts {
			marker := "  "
			if i == a.selected {
				marker = "❯ "
			}
			// A label too long for the row goes on under itself.
			bottom = append(bottom, wrap(fmt.Sprintf("  %s%d. %s", marker, i+1, o), a.cols, "     ")...)
		}
		bottom = append(bottom, "", "  Esc to cancel")
	default:
		bottom = []string{"", rule, " > " + a.draft, rule, "  ? for help · ctrl-d to quit"}
	}
	var top []string
	for _, line := range a.transcript {
		top = append(top, wrap(line, a.cols, "")...)
	}
	room := a.rows - len(bottom)
	if room < 0 {
		// A window shorter than the prompt: its last rows, the question
		// and the options, as an agent scrolls its own.
		bottom, room = bottom[-room:], 0
	}
	if len(top) > room {
		top = top[len(top)-room:]
	}
	var b strings.Builder
	b.WriteString("\x1b[?2026h\x1b[H\x1b[2J")
	for i, line := range append(append([]string{}, top...), bottom...) {
		fmt.Fprintf(&b, "\x1b[%d;1H%s", i+1, line)
	}
	if a.phase == "idle" {
		fmt.Fprintf(&b, "\x1b[%d;%dH\x1b[?25h", len(top)+3, 4+len([]rune(a.draft)))
	} else {
		b.WriteString("\x1b[?25l")
	}
	b.WriteString("\x1b[?2026l")
	_, _ = io.WriteString(a.out, b.String())
}

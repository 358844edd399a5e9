//go:build unix

// Package screens is the commands about an agent's screen: classify and
// explain read captured screens with the rules (classify.go); capture
// asks the daemon for a session's screen and doctor lists those it kept
// (capture.go). They read the sessions' screen records and render raw
// output with the sessions' emulator, so they are apart from the CLI.
package screens

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/cmd/agentd/internal/rules"
	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/sessions"
	"github.com/agentd/agentd/sessions/term"
)

// classifyLine is the --json contract of `agentd classify`: one line per file.
type classifyLine struct {
	File    string          `json:"file"`
	Agent   string          `json:"agent"`
	State   string          `json:"state"`
	Outcome string          `json:"outcome,omitempty"`
	Reason  string          `json:"reason"`
	Prompt  *classifyPrompt `json:"prompt,omitempty"`
}

type classifyPrompt struct {
	Kind     string           `json:"kind"`
	Question string           `json:"question"`
	Subject  *detect.Subject  `json:"subject,omitempty"`
	Options  []classifyOption `json:"options"`
}

type classifyOption struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// Classify is `agentd classify` and, with explain, `agentd explain`.
func Classify(args []string, stdout, stderr io.Writer, explain bool) int {
	name := "classify"
	if explain {
		name = "explain"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	agent := fs.String("agent", "", "agent whose rules to use (default: identify from the screen)")
	cols := fs.Int("cols", 120, "terminal columns for raw captures (default: the size in FILE's .json label beside it, else 120)")
	rows := fs.Int("rows", 40, "terminal rows for raw captures (default: the size in FILE's .json label beside it, else 40)")
	screen := fs.Bool("screen", false, "FILE is rendered text, one row per line, not raw PTY output")
	asJSON := fs.Bool("json", false, "print one JSON object per file")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(stderr, "agentd %s: no FILE given\n", name)
		return 2
	}
	if *cols < 2 || *rows < 2 || *cols > 1000 || *rows > 1000 {
		fmt.Fprintf(stderr, "agentd %s: --cols and --rows must be between 2 and 1000 (got %dx%d)\n", name, *cols, *rows)
		return 2
	}
	set, warnings := rules.Load()
	for _, w := range warnings {
		fmt.Fprintf(stderr, "agentd: warning: %v\n", w)
	}
	var forced *detect.Manifest
	if *agent != "" {
		m, ok := set.Lookup(*agent)
		if !ok {
			fmt.Fprintf(stderr, "agentd %s: unknown agent %q (known: %s)\n", name, *agent, strings.Join(set.Names(), ", "))
			return 2
		}
		forced = m
	}
	status := 0
	for _, file := range fs.Args() {
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "agentd %s: %v\n", name, err)
			status = 2
			continue
		}
		c, r := *cols, *rows
		if !sizeSet(fs) {
			c, r = labelSize(file, c, r)
		}
		var sc detect.Screen
		m, how := forced, "from --agent"
		if rec, ok := sessions.ReadScreenRecord(data); ok && !*screen {
			// A kept screen says its size and its agent.
			if !sizeSet(fs) {
				c, r = rec.Cols, rec.Rows
			}
			if c < 2 || r < 2 || c > 1000 || r > 1000 {
				fmt.Fprintf(stderr, "agentd %s: %s: a kept screen of %dx%d\n", name, file, c, r)
				status = 2
				continue
			}
			data = []byte(rec.Raw)
			if a, ok := set.Lookup(rec.Agent); ok && m == nil {
				m, how = a, "from the kept screen"
			}
		}
		if *screen {
			sc = detect.ScreenFromText(string(data), c, r)
		} else {
			sc = term.Render(data, c, r)
		}
		if m == nil {
			m, how = set.Identify(sc), "identified from the screen"
		}
		if explain {
			printExplanation(stdout, file, m, sc, how)
			continue
		}
		v := m.Classify(sc)
		if *asJSON {
			b, _ := json.Marshal(toLine(file, v))
			fmt.Fprintln(stdout, string(b))
			continue
		}
		fmt.Fprintln(stdout, readableLine(file, v))
	}
	return status
}

// sizeSet says whether --cols or --rows was given.
func sizeSet(fs *flag.FlagSet) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "cols" || f.Name == "rows" })
	return set
}

// labelSize is the terminal size a capture was recorded at, from the
// corpus label beside it (NAME.json for NAME.raw), else cols and rows: a
// capture replayed at another size is another screen.
func labelSize(file string, cols, rows int) (int, int) {
	data, err := os.ReadFile(strings.TrimSuffix(file, filepath.Ext(file)) + ".json")
	if err != nil {
		return cols, rows
	}
	var l struct{ Cols, Rows int }
	if json.Unmarshal(data, &l) != nil || l.Cols < 2 || l.Rows < 2 || l.Cols > 1000 || l.Rows > 1000 {
		return cols, rows
	}
	return l.Cols, l.Rows
}

func toLine(file string, v detect.Verdict) classifyLine {
	l := classifyLine{File: file, Agent: v.Agent, State: v.State, Reason: v.Reason}
	if v.State == detect.StateDone {
		l.Outcome = v.Outcome
	}
	if v.State == detect.StateBlocked && v.Prompt != nil {
		p := &classifyPrompt{Kind: v.Prompt.Kind, Question: v.Prompt.Question, Subject: v.Prompt.Subject, Options: []classifyOption{}}
		for _, o := range v.Prompt.Options {
			p.Options = append(p.Options, classifyOption{ID: o.ID, Label: o.Label})
		}
		l.Prompt = p
	}
	return l
}

func readableLine(file string, v detect.Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s", file, v.Agent, v.State)
	if v.State == detect.StateDone {
		fmt.Fprintf(&b, " (%s)", v.Outcome)
	}
	fmt.Fprintf(&b, " [%s]", v.Reason)
	if v.State == detect.StateBlocked && v.Prompt != nil {
		fmt.Fprintf(&b, " %s: %q", v.Prompt.Kind, v.Prompt.Question)
		if sub := v.Prompt.Subject; sub != nil {
			fmt.Fprintf(&b, " %s %q", sub.Kind, sub.Text)
			if sub.Truncated {
				b.WriteString(" (truncated)")
			}
		}
		for _, o := range v.Prompt.Options {
			fmt.Fprintf(&b, " %s=%q", o.ID, o.Label)
		}
	}
	return b.String()
}

func printExplanation(w io.Writer, file string, m *detect.Manifest, sc detect.Screen, how string) {
	ex := m.Explain(sc)
	fmt.Fprintf(w, "== %s\n", file)
	fmt.Fprintf(w, "agent: %s (%s, manifest %s)\n", m.Name, how, m.Source)
	fmt.Fprintf(w, "screen: %dx%d, cursor %d,%d, alt screen %v\n", sc.Cols, sc.Rows, sc.CursorRow, sc.CursorCol, sc.AltScreen)
	if sc.Status != nil {
		fmt.Fprintf(w, "program status: state=%s app=%s kind=%s msg=%q\n", sc.Status.State, sc.Status.App, sc.Status.Kind, sc.Status.Message)
	}
	for _, r := range ex.Regions {
		fmt.Fprintf(w, "region %s:\n", r.Name)
		for _, line := range strings.Split(r.Text, "\n") {
			fmt.Fprintf(w, "  | %s\n", line)
		}
	}
	fmt.Fprintln(w, "rules:")
	for _, r := range ex.Rules {
		mark := "-"
		detail := r.Why
		if r.Matched {
			mark = "+"
			detail = fmt.Sprintf("matched %q", r.Text)
		}
		fmt.Fprintf(w, "  %s %-28s %-8s %s\n", mark, r.ID, r.State, detail)
	}
	v := ex.Verdict
	fmt.Fprintf(w, "verdict: %s", v.State)
	if v.State == detect.StateDone {
		fmt.Fprintf(w, " (%s)", v.Outcome)
	}
	fmt.Fprintf(w, " [%s]\n", v.Reason)
	if v.Prompt != nil {
		fmt.Fprintf(w, "prompt %s (%s): %q freeform=%v\n", v.Prompt.ID, v.Prompt.Kind, v.Prompt.Question, v.Prompt.Freeform)
		if sub := v.Prompt.Subject; sub != nil {
			fmt.Fprintf(w, "  subject %s %q truncated=%v\n", sub.Kind, sub.Text, sub.Truncated)
			for _, line := range strings.Split(sub.Detail, "\n") {
				if sub.Detail != "" {
					fmt.Fprintf(w, "  | %s\n", line)
				}
			}
		}
		for _, o := range v.Prompt.Options {
			fmt.Fprintf(w, "  option %s %q kind=%s selected=%v keys=%q\n", o.ID, o.Label, o.Kind, o.Selected, o.Keys)
		}
	}
}

//go:build unix

// Package cli is agentd's command line, the daemon's third kind of
// client beside editors and Neovim: for people in a terminal and for
// scripts, locally or over `ssh host agentd …`. Each command connects,
// does one thing and leaves; no command but kill (and stop --force) ends
// an agent. It carries none of the daemon's code.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/cmd/agentd/internal/buildinfo"
	"github.com/agentd/agentd/cmd/agentd/internal/daemonlink"
	"github.com/agentd/agentd/cmd/agentd/internal/upgrade"
	"github.com/agentd/agentd/rpc/client"
	"github.com/agentd/agentd/rpc/protocol"
)

// Exit codes of the CLI.
const (
	ExitOK         = 0
	ExitFailed     = 1 // the thing asked could not be done: refused, stale, timed out
	ExitUsage      = 2 // bad arguments, no daemon, a broken connection
	exitEndedFirst = 3 // wait: the session ended before reaching the state
)

var errNoDaemon = errors.New("no agentd daemon is running")

// Conn is one command's connection to the daemon.
type Conn struct {
	c      *client.Client
	socket string
	hello  protocol.HelloParams
	host   string // the [[hosts]] entry reached over ssh; "" for this machine

	mu      sync.Mutex
	notes   []client.Notification
	arrived chan struct{} // poked for each notification
}

// dial connects to the daemon; start says whether to start one when none
// runs (only commands that make a session do).
//
// A daemon older than this agentd is first asked to hand its sessions
// over to it (package upgrade); stderr says how that went.
func dial(socketFlag string, start bool, stderr io.Writer) (*Conn, error) {
	path, err := daemonlink.SocketPath(socketFlag)
	if err != nil {
		return nil, err
	}
	k := &Conn{socket: path, arrived: make(chan struct{}, 1)}
	conn, err := daemonlink.Dial(path)
	if err != nil && daemonlink.CanStart(err) {
		if !start {
			return nil, fmt.Errorf("%w (nothing listens on %s)", errNoDaemon, path)
		}
		conn, err = daemonlink.Connect(path, daemonlink.DefaultServerFlags(), 10*time.Minute)
	}
	if err != nil {
		return nil, fmt.Errorf("agentd daemon at %s: %w", path, err)
	}
	cwd, _ := os.Getwd()
	hello := protocol.HelloParams{Version: buildinfo.Version, ProtocolVersion: protocol.ProtocolVersion, Pid: os.Getpid(), Cwd: cwd, Env: os.Environ()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	k.hello = hello
	k.c, err = client.NewClient(ctx, conn, hello, k.note)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	if d := k.c.Hello.Daemon; upgrade.Wanted(d) {
		k.c.Close()
		upgrade.Auto(path, d, stderr)
		if conn, err = daemonlink.Dial(path); err != nil {
			return nil, fmt.Errorf("agentd daemon at %s: %w", path, err)
		}
		if k.c, err = client.NewClient(ctx, conn, hello, k.note); err != nil {
			_ = conn.Close()
			return nil, err
		}
	}
	if err := k.initialize(ctx); err != nil {
		k.c.Close()
		return nil, err
	}
	return k, nil
}

func (k *Conn) initialize(ctx context.Context) error {
	cwd, _ := os.Getwd()
	var init protocol.InitializeResult
	return k.c.Call(ctx, protocol.MethodInitialize, protocol.InitializeParams{ClientInfo: &protocol.ClientInfo{Name: "agentd-cli", Version: buildinfo.Version}, WorkspaceFolders: []string{cwd}}, &init)
}

// reconnect connects again to the same daemon after its connection
// closed: what a handover does (agentd upgrade), as the daemon's process
// becomes the new code. Another daemon, or none, is an error.
func (k *Conn) reconnect() error {
	instance := k.c.Hello.Instance
	deadline := time.Now().Add(2 * time.Minute)
	for {
		nc, err := daemonlink.Dial(k.socket)
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			c, cerr := client.NewClient(ctx, nc, k.hello, k.note)
			cancel()
			if cerr == nil {
				if c.Hello.Instance != instance {
					c.Close()
					return fmt.Errorf("another daemon (pid %d) serves %s now", c.Hello.Pid, k.socket)
				}
				k.c = c
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				return k.initialize(ctx)
			}
			err = cerr
		} else if daemonlink.CanStart(err) {
			return err // nothing listens: the daemon is gone
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond) // a connection the old code took as it went
	}
}

func (k *Conn) note(n client.Notification) {
	k.mu.Lock()
	k.notes = append(k.notes, n)
	k.mu.Unlock()
	select {
	case k.arrived <- struct{}{}:
	default:
	}
}

// take returns the notifications that arrived since the last take.
func (k *Conn) take() []client.Notification {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := k.notes
	k.notes = nil
	return out
}

func (k *Conn) Call(method string, params, result any) error {
	return k.c.Call(context.Background(), method, params, result)
}

func (k *Conn) Close() { _ = k.c.Close() }

func (k *Conn) list() ([]protocol.Session, error) {
	var res protocol.ListResult
	if err := k.Call(protocol.MethodList, nil, &res); err != nil {
		return nil, err
	}
	return res.Sessions, nil
}

// Find resolves SESSION: an id, or a name only one session has (or only
// one live session has).
func (k *Conn) Find(ref string) (protocol.Session, error) {
	list, err := k.list()
	if err != nil {
		return protocol.Session{}, err
	}
	var named, live []protocol.Session
	for _, s := range list {
		if s.SessionID == ref {
			return s, nil
		}
		if s.Name == ref {
			named = append(named, s)
			if s.Exit == nil {
				live = append(live, s)
			}
		}
	}
	switch {
	case len(named) == 1:
		return named[0], nil
	case len(live) == 1:
		return live[0], nil
	case len(named) > 1:
		var ids []string
		for _, s := range named {
			ids = append(ids, s.SessionID)
		}
		return protocol.Session{}, fmt.Errorf("%q names %d sessions (%s): use the id", ref, len(named), strings.Join(ids, ", "))
	}
	var known []string
	for _, s := range list {
		known = append(known, s.SessionID+" "+s.Name)
	}
	if len(known) == 0 {
		return protocol.Session{}, fmt.Errorf("no session %q: the daemon has no sessions", ref)
	}
	return protocol.Session{}, fmt.Errorf("no session %q (sessions: %s)", ref, strings.Join(known, ", "))
}

// ParseArgs parses flags wherever they are among the arguments (`agentd
// wait s1 --until blocked`); "--" ends the flags.
func ParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// Flags is a command's flag set, with the --socket every command takes.
func Flags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("agentd "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", "", "the daemon's socket (default $AGENTD_SOCKET, else $XDG_RUNTIME_DIR/agentd/agentd.sock)")
	return fs, socket
}

// Fail prints a command's error; a JSON-RPC error is shown by its message.
func Fail(stderr io.Writer, cmd string, err error) int {
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		fmt.Fprintf(stderr, "agentd %s: %s\n", cmd, je.Message)
		return ExitFailed
	}
	fmt.Fprintf(stderr, "agentd %s: %v\n", cmd, err)
	return ExitUsage
}

// Ls is `agentd ls`: the sessions, their states and prompts.
func Ls(args []string, stdout, stderr io.Writer) int {
	fs, socket := Flags("ls", stderr)
	asJSON := fs.Bool("json", false, "print session/list's result as JSON")
	all := fs.Bool("all", false, "every host of config.toml's [[hosts]], with a HOST column")
	host := HostFlag(fs)
	if _, err := ParseArgs(fs, args); err != nil {
		return ExitUsage
	}
	if *all {
		return lsAll(*socket, *asJSON, stdout, stderr)
	}
	k, err := dialHost(*socket, *host, false, stderr)
	if errors.Is(err, errNoDaemon) {
		// Nothing runs: that is an empty list, not a failure.
		if *asJSON {
			fmt.Fprintln(stdout, `{"sessions":[]}`)
		} else {
			fmt.Fprintln(stderr, "agentd ls: no agentd daemon is running, so no sessions")
		}
		return ExitOK
	}
	if err != nil {
		return Fail(stderr, "ls", err)
	}
	defer k.Close()
	// Another build than ours serves the sessions: say so, on stderr,
	// so that --json's stdout stays parseable.
	for _, w := range k.c.Hello.Warnings {
		fmt.Fprintf(stderr, "agentd ls: %s\n", w)
	}
	list, err := k.list()
	if err != nil {
		return Fail(stderr, "ls", err)
	}
	if *asJSON {
		b, _ := json.Marshal(protocol.ListResult{Sessions: list})
		fmt.Fprintln(stdout, string(b))
		return ExitOK
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no sessions")
		return ExitOK
	}
	// The table is aligned first; each blocked session's prompt then goes
	// under its row, where it would break the columns.
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tAGENT\tSTATE\tSINCE\tCWD")
	home, _ := os.UserHomeDir()
	for _, s := range list {
		cwd := s.Cwd
		if home != "" && home != "/" && strings.HasPrefix(cwd, home+"/") {
			cwd = "~" + cwd[len(home):]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.SessionID, s.Name, s.Agent, stateWords(s.State, s.Outcome, s.Exit), ago(s.Since), cwd)
	}
	_ = tw.Flush()
	rows := strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n")
	fmt.Fprintln(stdout, rows[0])
	for i, s := range list {
		fmt.Fprintln(stdout, strings.TrimRight(rows[i+1], " "))
		if s.State == "blocked" && s.Prompt != nil {
			fmt.Fprintf(stdout, "    ↳ %s\n", promptLine(s.Prompt))
		}
	}
	return ExitOK
}

// stateWords is a state as ls shows it.
func stateWords(state, outcome string, exit *protocol.Exit) string {
	switch {
	case exit != nil && exit.Signal != "":
		return "exited (" + exit.Signal + ")"
	case exit != nil:
		return fmt.Sprintf("exited (%d)", exit.ExitCode)
	case outcome != "":
		return state + " (" + outcome + ")"
	}
	return state
}

// ago is how long ago an RFC 3339 time was, roughly.
func ago(stamp string) string {
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return "-"
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// promptLine is a prompt on one line: its question and options with ids.
func promptLine(p *protocol.Prompt) string {
	var b strings.Builder
	if sub := subjectWords(p); sub != "" {
		b.WriteString(sub + " — ")
	}
	b.WriteString(p.Question)
	for _, o := range p.Options {
		fmt.Fprintf(&b, "  [%s] %s", o.ID, o.Label)
	}
	if p.Freeform {
		b.WriteString("  (or --text)")
	}
	return b.String()
}

// subjectWords is what a prompt asks to approve, for a terminal: its kind
// and text quoted (agentd cleaned it; quoting keeps its edges clear),
// "(cut)" where agentd could not see it all; "" where it shows none.
func subjectWords(p *protocol.Prompt) string {
	sub := p.Subject
	if sub == nil {
		return ""
	}
	if sub.Text == "" {
		return "(agentd could not read what this approves: look at the terminal)"
	}
	w := fmt.Sprintf("%s %q", sub.Kind, sub.Text)
	if sub.Truncated {
		w += " (cut)"
	}
	return w
}

// waitEvent is what wait prints: the state reached, as JSON or a line.
type waitEvent struct {
	SessionID   string           `json:"sessionId"`
	Name        string           `json:"name,omitempty"`
	State       string           `json:"state"`
	Outcome     string           `json:"outcome,omitempty"`
	StateSource string           `json:"stateSource"`
	Reason      string           `json:"reason"`
	Since       string           `json:"since"`
	Prompt      *protocol.Prompt `json:"prompt,omitempty"`
}

var waitStates = map[string]bool{"blocked": true, "idle": true, "done": true, "working": true, "error": true, "exited": true, "changed": true}

// Wait is `agentd wait`: until a session reaches a state.
func Wait(args []string, stdout, stderr io.Writer) int {
	fs, socket := Flags("wait", stderr)
	host := HostFlag(fs)
	until := fs.String("until", "", "blocked, idle, done, working, error, exited, or changed (any new state or prompt)")
	timeout := fs.Duration("timeout", 0, "give up after this long (exit 1); 0 waits for ever")
	asJSON := fs.Bool("json", false, "print the state reached as JSON")
	pos, err := ParseArgs(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 || !waitStates[*until] {
		fmt.Fprintln(stderr, "usage: agentd wait SESSION --until blocked|idle|done|working|error|exited|changed [--timeout D] [--json]")
		return ExitUsage
	}
	k, ref, err := DialRef(*socket, *host, pos[0], false, stderr)
	if err != nil {
		return Fail(stderr, "wait", err)
	}
	defer k.Close()
	s, err := k.Find(ref)
	if err != nil {
		return Fail(stderr, "wait", err)
	}
	report := func(e waitEvent) {
		e.Name = s.Name
		if *asJSON {
			b, _ := json.Marshal(e)
			fmt.Fprintln(stdout, string(b))
			return
		}
		line := fmt.Sprintf("%s %s", e.SessionID, stateWords(e.State, e.Outcome, nil))
		if e.State == "blocked" && e.Prompt != nil {
			line += ": " + promptLine(e.Prompt)
		}
		fmt.Fprintln(stdout, line)
	}
	now := waitEvent{SessionID: s.SessionID, State: s.State, Outcome: s.Outcome, StateSource: s.StateSource, Reason: s.Reason, Since: s.Since, Prompt: s.Prompt}
	if *until == s.State {
		report(now)
		return ExitOK
	}
	if s.Exit != nil {
		fmt.Fprintf(stderr, "agentd wait: %s has exited: it will not be %s\n", s.SessionID, *until)
		return exitEndedFirst
	}
	var deadline <-chan time.Time
	if *timeout > 0 {
		t := time.NewTimer(*timeout)
		defer t.Stop()
		deadline = t.C
	}
	last := now
	for {
		for _, n := range k.take() {
			if n.Method != protocol.NoteState {
				continue
			}
			var st protocol.StateNotification
			if json.Unmarshal(n.Params, &st) != nil || st.SessionID != s.SessionID {
				continue
			}
			e := waitEvent{SessionID: st.SessionID, State: st.State, Outcome: st.Outcome, StateSource: st.StateSource, Reason: st.Reason, Since: st.Since, Prompt: st.Prompt}
			if st.State == *until || (*until == "changed" && !sameState(e, now)) {
				report(e)
				return ExitOK
			}
			if st.State == "exited" {
				fmt.Fprintf(stderr, "agentd wait: %s exited before it was %s\n", s.SessionID, *until)
				return exitEndedFirst
			}
			last = e
		}
		select {
		case <-k.arrived:
		case <-k.c.Done():
			fmt.Fprintln(stderr, "agentd wait: the daemon closed the connection")
			return ExitUsage
		case <-deadline:
			fmt.Fprintf(stderr, "agentd wait: %s was not %s within %s; it is %s\n", s.SessionID, *until, *timeout, stateWords(last.State, last.Outcome, nil))
			return ExitFailed
		}
	}
}

func sameState(a, b waitEvent) bool {
	id := func(p *protocol.Prompt) string {
		if p == nil {
			return ""
		}
		return p.ID
	}
	return a.State == b.State && a.Outcome == b.Outcome && id(a.Prompt) == id(b.Prompt)
}

// Answer is `agentd answer`: the prompt on screen, guarded as
// runtime_answer is.
func Answer(args []string, stdout, stderr io.Writer) int {
	fs, socket := Flags("answer", stderr)
	host := HostFlag(fs)
	text := fs.String("text", "", "answer with this text, where the prompt takes free text")
	promptID := fs.String("prompt", "", "answer only if this prompt (its promptId, from ls --json or wait --json) is the one on screen")
	pos, err := ParseArgs(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) < 1 || len(pos) > 2 || (len(pos) == 2) == (*text != "") {
		fmt.Fprintln(stderr, "usage: agentd answer SESSION OPTION | agentd answer SESSION --text TEXT   [--prompt ID]")
		return ExitUsage
	}
	k, ref, err := DialRef(*socket, *host, pos[0], false, stderr)
	if err != nil {
		return Fail(stderr, "answer", err)
	}
	defer k.Close()
	s, err := k.Find(ref)
	if err != nil {
		return Fail(stderr, "answer", err)
	}
	if s.State != "blocked" || s.Prompt == nil {
		fmt.Fprintf(stderr, "agentd answer: %s is not waiting on a prompt: it is %s\n", s.SessionID, stateWords(s.State, s.Outcome, s.Exit))
		return ExitFailed
	}
	p := s.Prompt
	if *promptID != "" && *promptID != p.ID {
		// Let agentd's own guard say so, with the prompt on screen now.
		p = &protocol.Prompt{ID: *promptID}
	}
	params := protocol.AnswerParams{SessionID: s.SessionID, PromptID: p.ID, Text: *text}
	var chosen string
	if len(pos) == 2 {
		opt, ok := pickOption(s.Prompt, pos[1])
		if !ok {
			fmt.Fprintf(stderr, "agentd answer: the prompt has no option %q: %s\n", pos[1], promptLine(s.Prompt))
			return ExitFailed
		}
		params.OptionID, chosen = opt.ID, "["+opt.ID+"] "+opt.Label
	} else {
		chosen = fmt.Sprintf("text %q", *text)
	}
	var res protocol.AnswerResult
	if err := k.Call(protocol.MethodAnswer, params, &res); err != nil {
		var je *jsonrpc2.Error
		if errors.As(err, &je) && je.Code == protocol.CodePromptStale {
			fmt.Fprintf(stderr, "agentd answer: not answered: the prompt on screen is not the one answered\n")
			var data struct{ Prompt *protocol.Prompt }
			if je.Data != nil && json.Unmarshal(*je.Data, &data) == nil && data.Prompt != nil {
				fmt.Fprintf(stderr, "on screen now (promptId %s): %s\n", data.Prompt.ID, promptLine(data.Prompt))
			} else {
				fmt.Fprintln(stderr, "no prompt is on screen now")
			}
			return ExitFailed
		}
		return Fail(stderr, "answer", err)
	}
	what := s.SessionID
	if sub := subjectWords(s.Prompt); sub != "" {
		what += " (" + sub + ")" // echo what the answer was about
	}
	fmt.Fprintf(stdout, "answered %s with %s; it is %s\n", what, chosen, res.State)
	return ExitOK
}

// pickOption finds an option by id, else by its label (any case).
func pickOption(p *protocol.Prompt, want string) (protocol.Option, bool) {
	if o, ok := p.Option(want); ok {
		return o, true
	}
	for _, o := range p.Options {
		if strings.EqualFold(o.Label, want) {
			return o, true
		}
	}
	return protocol.Option{}, false
}

// Send is `agentd send`: text typed into an agent that waits on none.
func Send(args []string, stdout, stderr io.Writer) int {
	fs, socket := Flags("send", stderr)
	host := HostFlag(fs)
	noSubmit := fs.Bool("no-submit", false, "type the text without pressing Enter")
	pos, err := ParseArgs(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) < 2 {
		fmt.Fprintln(stderr, "usage: agentd send SESSION TEXT... [--no-submit]")
		return ExitUsage
	}
	k, ref, err := DialRef(*socket, *host, pos[0], false, stderr)
	if err != nil {
		return Fail(stderr, "send", err)
	}
	defer k.Close()
	s, err := k.Find(ref)
	if err != nil {
		return Fail(stderr, "send", err)
	}
	err = k.Call(protocol.MethodSend, protocol.SendParams{SessionID: s.SessionID, Text: strings.Join(pos[1:], " "), Submit: !*noSubmit}, nil)
	var je *jsonrpc2.Error
	if errors.As(err, &je) && je.Code == protocol.CodeSessionBlocked {
		fmt.Fprintf(stderr, "agentd send: not sent: %s is waiting on a prompt; answer it with `agentd answer %s OPTION`\n", s.SessionID, s.SessionID)
		var data struct{ Prompt *protocol.Prompt }
		if je.Data != nil && json.Unmarshal(*je.Data, &data) == nil && data.Prompt != nil {
			fmt.Fprintf(stderr, "on screen: %s\n", promptLine(data.Prompt))
		}
		return ExitFailed
	}
	if err != nil {
		return Fail(stderr, "send", err)
	}
	return ExitOK
}

// Kill is `agentd kill`: end a session.
func Kill(args []string, stdout, stderr io.Writer) int {
	fs, socket := Flags("kill", stderr)
	host := HostFlag(fs)
	sig := fs.String("signal", "", "the signal (default SIGHUP, then SIGKILL after 2 s)")
	pos, err := ParseArgs(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: agentd kill SESSION [--signal SIG]")
		return ExitUsage
	}
	k, ref, err := DialRef(*socket, *host, pos[0], false, stderr)
	if err != nil {
		return Fail(stderr, "kill", err)
	}
	defer k.Close()
	s, err := k.Find(ref)
	if err != nil {
		return Fail(stderr, "kill", err)
	}
	if err := k.Call(protocol.MethodKill, protocol.KillParams{SessionID: s.SessionID, Signal: *sig}, nil); err != nil {
		return Fail(stderr, "kill", err)
	}
	return ExitOK
}

// Stop is `agentd stop`: end the daemon (--force: its sessions too).
func Stop(args []string, stdout, stderr io.Writer) int {
	fs, socket := Flags("stop", stderr)
	force := fs.Bool("force", false, "also end the sessions that still run")
	if _, err := ParseArgs(fs, args); err != nil {
		return ExitUsage
	}
	k, err := dial(*socket, false, stderr)
	if errors.Is(err, errNoDaemon) {
		fmt.Fprintln(stdout, "no agentd daemon is running")
		return ExitOK
	}
	if err != nil {
		return Fail(stderr, "stop", err)
	}
	defer k.Close()
	pid := k.c.Hello.Pid
	if err := k.Call(protocol.MethodStop, protocol.StopParams{Force: *force}, nil); err != nil {
		return Fail(stderr, "stop", err)
	}
	// The daemon closes every connection once its sessions have ended, then
	// leaves, letting go of its socket and lock: once it is gone a new one
	// can start at once.
	if !daemonlink.Gone(k.socket, 30*time.Second) {
		fmt.Fprintf(stderr, "agentd stop: the daemon (pid %d) is still ending after 30 s\n", pid)
		return ExitFailed
	}
	fmt.Fprintf(stdout, "agentd daemon (pid %d) stopped\n", pid)
	return ExitOK
}

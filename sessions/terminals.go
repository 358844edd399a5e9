package sessions

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/agentd/agentd/acp"
	"github.com/agentd/agentd/sessions/term"

	"github.com/agentd/agentd/detect"
)

// ptyTerminals runs an ACP agent's terminal/* commands as agentd PTY
// sessions of their own, so the editor lists them and can watch them like
// any session, and they end with agentd like any session.
type ptyTerminals struct {
	m      *Manager
	parent *Session

	mu    sync.Mutex
	terms map[string]*Session
}

func newPTYTerminals(m *Manager, parent *Session) *ptyTerminals {
	return &ptyTerminals{m: m, parent: parent, terms: map[string]*Session{}}
}

// defaultTerminalOutput bounds a terminal's kept output when the agent
// names no limit.
const defaultTerminalOutput = 1 << 20

func (p *ptyTerminals) Create(_ context.Context, req acp.TerminalRequest) (string, error) {
	argv := append([]string{req.Command}, req.Args...)
	if len(req.Args) == 0 {
		// A whole command line in Command (Claude Code ACP sends those).
		argv = []string{"/bin/sh", "-c", req.Command}
	}
	env := map[string]*string{}
	for _, list := range [][]string{p.parent.env, req.Env} {
		for _, kv := range list {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = &v
		}
	}
	limit := req.OutputByteLimit
	if limit <= 0 {
		limit = defaultTerminalOutput
	}
	name := "terminal: " + req.Command
	if len(name) > 60 {
		name = name[:60] + "…"
	}
	s, err := p.m.Spawn(SpawnSpec{Argv: argv, Cwd: req.Cwd, Env: env, Name: name, Agent: detect.Shell, capture: limit})
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	p.terms[s.ID] = s
	p.mu.Unlock()
	return s.ID, nil
}

func (p *ptyTerminals) get(id string) (*Session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.terms[id]
	if !ok {
		return nil, acp.ErrUnknownTerminal
	}
	return s, nil
}

func (p *ptyTerminals) Output(id string) (acp.TerminalOutput, error) {
	s, err := p.get(id)
	if err != nil {
		return acp.TerminalOutput{}, err
	}
	text, truncated := s.captured()
	out := acp.TerminalOutput{Output: text, Truncated: truncated}
	if e := s.exitStatus(); e != nil {
		out.Exit = toTerminalExit(*e)
	}
	return out, nil
}

func (p *ptyTerminals) WaitForExit(ctx context.Context, id string) (acp.TerminalExit, error) {
	s, err := p.get(id)
	if err != nil {
		return acp.TerminalExit{}, err
	}
	select {
	case <-s.Exited():
		return *toTerminalExit(*s.exitStatus()), nil
	case <-ctx.Done():
		return acp.TerminalExit{}, ctx.Err()
	}
}

func (p *ptyTerminals) Kill(id string) error {
	s, err := p.get(id)
	if err != nil {
		return err
	}
	if err := s.Signal(syscall.SIGKILL); err != nil && err != ErrExited {
		return err
	}
	return nil
}

// Release ends the command if it still runs; the session stays listed as
// exited so the editor still shows what ran.
func (p *ptyTerminals) Release(id string) error {
	if err := p.Kill(id); err != nil {
		return err
	}
	p.mu.Lock()
	delete(p.terms, id)
	p.mu.Unlock()
	return nil
}

func toTerminalExit(e ExitStatus) *acp.TerminalExit {
	if e.Signal != "" {
		return &acp.TerminalExit{Signal: e.Signal}
	}
	code := e.Code
	return &acp.TerminalExit{ExitCode: &code}
}

func (s *Session) exitStatus() *ExitStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exited == nil {
		return nil
	}
	e := *s.exited
	return &e
}

// outputCapture keeps the newest output of a session as text, for an ACP
// agent that reads its terminal's output.
type outputCapture struct {
	limit     int
	buf       []byte
	truncated bool
}

func (c *outputCapture) add(b []byte) {
	c.buf = append(c.buf, b...)
	if over := len(c.buf) - 4*c.limit; over > 0 {
		// Raw output carries escapes; keep room, trim in captured().
		c.buf = c.buf[over:]
		c.truncated = true
	}
}

// captured returns the kept output as plain text: escape sequences taken
// out, CR LF as LF, at most the limit's newest bytes, cut at a character.
func (s *Session) captured() (string, bool) {
	t, err := s.terminal()
	if err != nil {
		return "", false
	}
	return t.captured()
}

// captured is the output kept (SpawnSpec.capture) as plain text.
func (d *ptyDriver) captured() (string, bool) {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	c := d.capture
	if c == nil {
		return "", false
	}
	text := plainText(c.buf)
	truncated := c.truncated
	if len(text) > c.limit {
		cut := len(text) - c.limit
		for cut < len(text) && !utf8.RuneStart(text[cut]) {
			cut++
		}
		text, truncated = text[cut:], true
	}
	return text, truncated
}

// plainText is the output without escape sequences, with CRLF as LF.
func plainText(b []byte) string {
	return lineEnds.ReplaceAllString(string(term.StripEscapes(b)), "\n")
}

// lineEnds are the PTY's line ends: its output turns "\n" into "\r\n", so
// a program that wrote "\r\n" itself shows "\r\r\n".
var lineEnds = regexp.MustCompile(`\r+\n`)

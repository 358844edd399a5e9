package sessions

import "github.com/agentd/agentd/sessions/term"

// benchTerminal gives s a terminal driver on t (pump_bench_test.go).
func benchTerminal(s *Session, t *term.Terminal) {
	s.pty = &ptyDriver{s: s, term: t}
	s.drv = s.pty
}

// benchAdd has p read s's terminal on fd.
func benchAdd(p *pump, s *Session, fd int) error { return p.add(s, fd) }

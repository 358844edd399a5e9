package sessions

import "github.com/agentd/agentd/sessions/term"

// benchTerminal gives s a terminal driver on t (pump_bench_test.go).
func benchTerminal(s *Session, t *term.Terminal) {
	s.drv = &ptyDriver{s: s, term: t}
}

// benchAdd has p read s's terminal on fd.
func benchAdd(p *pump, s *Session, fd int) error { return p.add(ptyOf(s), fd) }

// benchLook is the look the pump has a due session take.
func benchLook(d *ptyDriver) { d.s.update() }

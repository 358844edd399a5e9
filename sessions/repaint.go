package sessions

// Repaint returns bytes that draw the session's terminal on a blank one of
// the same size, with its colours and the modes a viewer's keys depend on:
// what a viewer needs before live output. With history set, the lines
// that scrolled off the top come first.
func (s *Session) Repaint(history bool) string {
	t, err := s.terminal()
	if err != nil {
		return ""
	}
	return t.repaint(history)
}

// WatchOutput starts a viewer of the session's output: start is given the
// repaint of the screen as it is, and no output can come between that
// screen and the live output that follows it (start must queue the repaint
// and make the viewer's output flow before it returns). start reports
// whether the viewer is new, rather than one asking for a repaint again.
// A session with no terminal (ACP) has no output to watch: ErrNoScreen.
func (s *Session) WatchOutput(start func(repaint string) (isNew bool)) error {
	t, err := s.terminal()
	if err != nil {
		return err
	}
	t.watch(start)
	return nil
}

func (d *ptyDriver) watch(start func(repaint string) (isNew bool)) {
	d.outMu.Lock()
	defer d.outMu.Unlock()
	if start(string(d.term.Repaint(true))) {
		d.s.mgr.Subscribe(d.s.ID, true)
	}
}

// UnwatchOutput ends one viewer of the session's output.
func (s *Session) UnwatchOutput() { s.mgr.Subscribe(s.ID, false) }

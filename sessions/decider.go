package sessions

import "github.com/agentd/agentd/detect"

// Decider is a live session's decision (the agent's rules, the OSC 7501
// reports the screen carries, and the state bookkeeping), stepped by a
// caller on screens it chose itself: the bench uses it to run the same
// rules on other sampling schedules (a sweep, a poll, a pseudo-screen).
type Decider struct{ s *Session }

// NewDecider starts a decision as a session with no process would.
func NewDecider(m *detect.Manifest) *Decider {
	return &Decider{s: &Session{manifest: m, state: State{Name: Working, Reason: "process.starting"}}}
}

// Decide classifies sc and returns the state a session would now report,
// as Simulate does at the end of a burst.
func (d *Decider) Decide(sc detect.Screen) State {
	s := d.s
	v := s.manifest.Classify(sc)
	rep := s.freshReport(v, sc)
	if !v.Unmatched() || rep != nil {
		s.ready = true
	}
	next := decide(evidence{screen: v, report: rep, current: s.state, starting: !s.ready && s.manifest.HasIdleRule(), knowsIdle: s.manifest.HasIdleRule()})
	next.Agent = s.manifest.Name
	s.state = next
	return next
}

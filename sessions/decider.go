package sessions

import (
	"time"

	"github.com/agentd/agentd/detect"
)

// Decider is a live session's decision (its machine: the agent's rules,
// the OSC 7501 reports the screen carries, and the state's memory),
// stepped by a caller on screens it chose itself, with no terminal and no
// process: Simulate, the replays and the bench use it to run the very
// decision a live session makes on other sampling schedules (a sweep, a
// poll, a pseudo-screen).
type Decider struct {
	rules   *detect.Manifest
	machine machine
	start   time.Time
}

// NewDecider starts a decision as a newly spawned session's.
func NewDecider(m *detect.Manifest) *Decider {
	start := time.Unix(0, 0)
	return &Decider{rules: m, start: start, machine: newMachine(startingState(m.Name, start))}
}

// Decide classifies sc and returns the state a session would now report.
// at is the time since the session started, on the caller's clock.
func (d *Decider) Decide(sc detect.Screen, at time.Duration) State {
	st, _ := d.decide(sc, at)
	return st
}

// decide is Decide, with how soon a live session would look again on its
// own (see machine.step).
func (d *Decider) decide(sc detect.Screen, at time.Duration) (State, time.Duration) {
	st, _, again := d.machine.step(facts{
		rules: d.rules, agent: d.rules.Name, now: d.start.Add(at),
		screen: d.rules.Classify(sc), status: sc.Status, statusSeq: sc.StatusSeq,
	})
	return st, again
}

// startingState is every session's state before its first look.
func startingState(agent string, now time.Time) State {
	return State{Agent: agent, Name: Working, Source: SourceProcess, Reason: "process.starting", Since: now}
}

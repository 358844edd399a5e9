package main

import (
	"time"

	"github.com/agentd/agentd/sessions"
)

// timedTransition is a live session/state notification matched to the
// simulated transition it stands for.
type timedTransition struct {
	state, reason string
	write         int           // the replayer's write that completed the frame
	latency       time.Duration // from that write returning to the notification's arrival
	// overWait is latency minus the wait the pump's clock itself designs
	// (Transition.Wait: settle and tick, a held frame, a rule's hold): what
	// the daemon adds beyond what it meant to wait.
	overWait time.Duration
}

// transitionMatch is one replay's notifications against the transitions
// sessions.Simulate found on the same bytes.
type transitionMatch struct {
	timed              []timedTransition
	unexpected, missed int
}

// matchTransitions matches a replay's live notifications to the simulated
// transitions in order, by state and reason: a notification is the next
// wanted transition of its state and reason (by name alone, a live run that
// coalesced two simulated blocked states paired the next prompt with the
// second, and timed it from the wrong write); the wanted ones
// passed over to reach it are missed, and a notification whose state does
// not come again is unexpected. writeAt is when each write of the replay
// returned (the replayer's -log).
func matchTransitions(want []sessions.Transition, got []timedState, writeAt []time.Time) transitionMatch {
	var m transitionMatch
	next := 0
	for _, g := range got {
		if g.State == "exited" || g.Reason == "process.starting" {
			continue // the session's start and end: no frame of the recording made them
		}
		k := next
		for k < len(want) && (want[k].State.Name != g.State || want[k].State.Reason != g.Reason) {
			k++
		}
		if k == len(want) {
			m.unexpected++
			continue
		}
		m.missed += k - next
		if w := want[k].Write; w >= 0 && w < len(writeAt) {
			lat := g.At.Sub(writeAt[w])
			m.timed = append(m.timed, timedTransition{state: g.State, reason: g.Reason, write: w, latency: lat, overWait: lat - want[k].Wait})
		}
		next = k + 1
	}
	m.missed += len(want) - next
	return m
}

package main

import (
	"time"

	"github.com/agentd/agentd/fixtures/recording"
	"github.com/agentd/agentd/sessions"
)

// matchTransitions matches a replay's live notifications to the
// transitions sessions.Simulate found on the same bytes (recording.Match,
// which the latency benchmark uses too). writeAt is when each write of the
// replay began (the replayer's -log).
func matchTransitions(want []sessions.Transition, got []timedState, writeAt []time.Time) recording.Matched {
	return recording.Match(wanted(want), liveStates(got), writeAt)
}

func wanted(ts []sessions.Transition) []recording.Wanted {
	out := make([]recording.Wanted, len(ts))
	for i, t := range ts {
		out[i] = recording.Wanted{State: t.State.Name, Reason: t.State.Reason, Write: t.Write, Wait: t.Wait}
	}
	return out
}

func liveStates(got []timedState) []recording.Live {
	out := make([]recording.Live, len(got))
	for i, g := range got {
		out[i] = recording.Live{State: g.State, Reason: g.Reason, At: g.At}
	}
	return out
}

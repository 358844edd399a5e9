package sessions

import "time"

// The pump's clock: when a session's output is read and when it is
// classified. It is written once, here, as pure functions of times on one
// axis, and both the live pump (pump.go) and Simulate ask them, so the two
// cannot drift apart; TestLiveDecisionIsSimulated runs each its own way
// (the pump's own scheduling on a virtual clock, and Simulate's loop) and
// compares what they decide. The axis is the Unix epoch for the live pump,
// whose ticks are wall-clock aligned, and the first write for Simulate.

// classifyAt is when a session is classified whose first change not yet
// classified came at first and whose latest came at last; whole: that
// latest change released a frame the agent drew in synchronized output
// (?2026h … ?2026l) and opened no other.
//
// A whole frame is classified at once: the agent itself said the frame is
// done, so waiting can only add latency. Anything else is coalesced: once
// the output has been quiet for settle, never later than maxDelay after
// first, on the pump's tick. Agents that do not mark their frames draw one
// in pieces up to about 5 ms apart, so classifying the first write after
// quiet at once, without a mark, reads half frames: over the committed
// recordings it made 5,217 transitions where this clock makes 4,592, and
// 519 states that lasted under 30 ms where this clock makes 169
// (docs/benchmarks.md, the pump section).
func classifyAt(first, last time.Duration, whole bool) time.Duration {
	if whole {
		return last
	}
	return onGrid(min(last+settle, first+maxDelay))
}

// heldUntil is how long a session whose first change not yet classified
// came at first waits, at most, while the agent holds a frame in
// synchronized output (?2026h): half a frame is not classified.
func heldUntil(first time.Duration) time.Duration {
	return onGrid(first + syncHold)
}

// readAt is when the pump reads a write made at at, when its last read
// was at last: on the tick after that read if the write came by then (the
// pump looks once more a tick after output), else at once (it had parked,
// and the write woke it).
func readAt(last, at time.Duration) time.Duration {
	if next := onGrid(last + 1); at <= next {
		return next
	}
	return at
}

// onGrid rounds d up to the pump's tick.
func onGrid(d time.Duration) time.Duration {
	return (d + tick - 1) / tick * tick
}

// clockOf is t on the live pump's axis.
func clockOf(t time.Time) time.Duration { return time.Duration(t.UnixNano()) }

// timeAt is the moment d of the live pump's axis, as a time that keeps
// ref's monotonic clock reading (it is ref moved by the difference), so a
// step of the wall clock holds no classification back.
func timeAt(ref time.Time, d time.Duration) time.Time { return ref.Add(d - clockOf(ref)) }

// onTick rounds t up to the pump's grid.
func onTick(t time.Time) time.Time { return timeAt(t, onGrid(clockOf(t))) }

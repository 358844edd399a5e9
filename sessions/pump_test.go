package sessions

import (
	"testing"
	"time"
)

// The pump's grid keeps the monotonic clock: a classification due time is
// never read against the wall clock alone.
func TestOnTickKeepsMonotonicClock(t *testing.T) {
	now := time.Now()
	due := onTick(now.Add(time.Nanosecond))
	if d := due.Sub(now); d <= 0 || d > tick {
		t.Fatalf("onTick moved %v, want within (0, %v]", d, tick)
	}
	if due.UnixNano()%int64(tick) != 0 {
		t.Fatalf("onTick(%v) = %v is not on the grid", now, due)
	}
	if due.String() == due.Round(0).String() {
		t.Fatalf("onTick(%v) = %v dropped the monotonic reading", now, due)
	}
}

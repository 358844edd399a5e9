package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// Live states are matched to the simulated ones in order by state and
// reason: one the
// simulation had and the live run skipped is missed, one the simulation
// never has again is unexpected, and the start and exit are not frames.
func TestMatchTransitions(t *testing.T) {
	t0 := time.Unix(1000, 0)
	writeAt := []time.Time{t0, t0.Add(100 * time.Millisecond), t0.Add(200 * time.Millisecond), t0.Add(300 * time.Millisecond)}
	want := []sessions.Transition{
		{Write: 0, State: sessions.State{Name: "working", Reason: "x.spinner"}, Wait: 5 * time.Millisecond},
		{Write: 1, State: sessions.State{Name: "blocked", Reason: "x.menu"}, Wait: 2 * time.Millisecond},
		{Write: 2, State: sessions.State{Name: "working", Reason: "x.spinner"}, Wait: 700 * time.Millisecond}, // a rule's hold
		{Write: 3, State: sessions.State{Name: "idle", Reason: "x.composer"}, Wait: 3 * time.Millisecond},
	}
	live := func(state, reason string, at time.Duration) timedState {
		return timedState{StateNotification: protocol.StateNotification{State: state, Reason: reason}, At: t0.Add(at)}
	}
	got := []timedState{
		live("working", "process.starting", 0),
		live("working", "x.spinner", 7*time.Millisecond),
		// blocked never came: missed when working is matched past it.
		live("working", "x.spinner", 904*time.Millisecond),
		live("error", "x.api_error", 950*time.Millisecond), // not simulated at all
		live("idle", "x.ready", 1000*time.Millisecond),     // a state simulated, for another reason
		live("idle", "x.composer", 1304*time.Millisecond),
		live("exited", "process.exited", 1400*time.Millisecond),
	}
	m := matchTransitions(want, got, writeAt)
	if m.unexpected != 2 || m.missed != 1 || len(m.timed) != 3 {
		t.Fatalf("unexpected %d, missed %d, timed %d: want 2, 1, 3", m.unexpected, m.missed, len(m.timed))
	}
	for i, w := range []struct {
		write         int
		latency, over time.Duration
	}{{0, 7 * time.Millisecond, 2 * time.Millisecond}, {2, 704 * time.Millisecond, 4 * time.Millisecond}, {3, 1004 * time.Millisecond, 1001 * time.Millisecond}} {
		if g := m.timed[i]; g.write != w.write || g.latency != w.latency || g.overWait != w.over {
			t.Errorf("timed[%d] = write %d, %s, over-wait %s; want write %d, %s, over-wait %s", i, g.write, g.latency, g.overWait, w.write, w.latency, w.over)
		}
	}
	// Live states the simulation did not expect at all, after every wanted one.
	if m := matchTransitions(want[:1], got[:3], writeAt); m.unexpected != 1 || m.missed != 0 || len(m.timed) != 1 {
		t.Fatalf("after the last wanted state: %+v", m)
	}
}

func TestPumpFormatting(t *testing.T) {
	if r := ratioOf(3.1, 5, "%.1f %%"); r != "0.62 (3.1 % / 5.0 %)" {
		t.Errorf("ratioOf = %q", r)
	}
	if r := ratioOf(-1, 5, "%.1f ms"); !strings.HasPrefix(r, "—") {
		t.Errorf("ratioOf with nothing measured = %q", r)
	}
	if r := ratioOf(0.2, 0, "%.1f %%"); !strings.HasPrefix(r, "—") {
		t.Errorf("ratioOf over zero = %q", r)
	}
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 8: "8th", 11: "11th", 12: "12th", 13: "13th", 22: "22nd", 32: "32nd", 101: "101st", 111: "111th"} {
		if g := ordinal(n); g != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, g, want)
		}
	}
	for n, want := range map[int]string{0: "0", 100: "100", 1000: "1,000", 20014: "20,014", 1234567: "1,234,567"} {
		if g := thousands(n); g != want {
			t.Errorf("thousands(%d) = %q, want %q", n, g, want)
		}
	}
}

func TestNoFileLimit(t *testing.T) {
	limits := "Limit                     Soft Limit           Hard Limit           Units     \n" +
		"Max processes             96367                96367                processes \n" +
		"Max open files            1024                 524288               files     \n"
	if got, err := noFileLimit(limits); err != nil || got != "1024/524288" {
		t.Fatalf("noFileLimit = %q, %v", got, err)
	}
	if _, err := noFileLimit("Limit Soft Hard\n"); err == nil {
		t.Fatal("no error without the line")
	}
	if _, err := procNoFile(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if n, err := procFDCount(os.Getpid()); err != nil || n < 3 {
		t.Fatalf("procFDCount = %d, %v", n, err)
	}
}

// A revision the clone does not have leaves the column saying so, and
// nothing to remove.
func TestBaselineNotInClone(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{root: root, tmp: t.TempDir()}
	bin, remove, why := b.buildBaseline("0123456789abcdef0123456789abcdef01234567")
	defer remove()
	if bin != "" || why != "—: 0123456789abcdef0123456789abcdef01234567 not in this clone" {
		t.Fatalf("bin %q, why %q", bin, why)
	}
}

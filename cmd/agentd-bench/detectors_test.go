package main

import (
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// These tests check the detectors section's scoring on small synthetic
// timelines: mock windows and claims written by hand, not recordings, so
// they say exactly what each rule counts. Nothing here reads a clock.

const msec = time.Millisecond

func TestScoreLatencyMissAndPersistence(t *testing.T) {
	windows := []truthWin{
		{from: 0, to: 1000 * msec, state: detect.StateWorking, what: "w"},
		{from: 1000 * msec, to: 3000 * msec, state: detect.StateBlocked, what: "p1"},
		{from: 3000 * msec, to: 4000 * msec, state: detect.StateWorking, what: "w2"},
		{from: 5000 * msec, to: 6000 * msec, state: detect.StateBlocked, what: "p2"},
	}
	claims := []blockedClaim{
		{from: 1008 * msec, to: 3030 * msec}, // detects p1 after 8 ms, stays 30 ms after it left
	}
	s := scoreClaims(windows, claims)
	if s.prompts != 2 || s.missed != 1 {
		t.Fatalf("prompts %d missed %d, want 2 and 1", s.prompts, s.missed)
	}
	if len(s.latency) != 1 || s.latency[0] != 8*msec {
		t.Fatalf("latency %v, want [8ms]", s.latency)
	}
	if len(s.persistence) != 1 || s.persistence[0] != 30*msec {
		t.Fatalf("persistence %v, want [30ms]", s.persistence)
	}
	// The tail into w2 is persistence, not a false alarm.
	if n, _ := totalAlarms(s); n != 0 {
		t.Fatalf("false alarms %v, want none", s.alarms)
	}
	if s.scored != 5000*msec {
		t.Fatalf("scored %v, want 5s", s.scored)
	}
}

func TestScoreAlreadyBlockedIsZeroLatency(t *testing.T) {
	windows := []truthWin{{from: 1000 * msec, to: 2000 * msec, state: detect.StateBlocked}}
	s := scoreClaims(windows, []blockedClaim{{from: 990 * msec, to: 2000 * msec}})
	if s.missed != 0 || s.latency[0] != 0 || s.persistence[0] != 0 {
		t.Fatalf("got missed %d latency %v persistence %v", s.missed, s.latency, s.persistence)
	}
}

func TestScoreFalseAlarmsSplitByTrueState(t *testing.T) {
	windows := []truthWin{
		{from: 0, to: 1000 * msec, state: detect.StateWorking},
		{from: 1000 * msec, to: 2000 * msec, state: detect.StateDone},
		{from: 3000 * msec, to: 4000 * msec, state: detect.StateIdle},
	}
	claims := []blockedClaim{
		{from: 800 * msec, to: 1300 * msec},  // one episode, first seen while working; time split
		{from: 2500 * msec, to: 2800 * msec}, // outside every window: unscored
		{from: 3500 * msec, to: 3600 * msec}, // idle
	}
	s := scoreClaims(windows, claims)
	if s.alarms[detect.StateWorking] != 1 || s.alarms[detect.StateDone] != 0 || s.alarms[detect.StateIdle] != 1 {
		t.Fatalf("episodes %v", s.alarms)
	}
	if s.alarmTime[detect.StateWorking] != 200*msec || s.alarmTime[detect.StateDone] != 300*msec || s.alarmTime[detect.StateIdle] != 100*msec {
		t.Fatalf("times %v", s.alarmTime)
	}
}

func TestScoreOpenPromptHasNoPersistence(t *testing.T) {
	windows := []truthWin{{from: 0, to: 1000 * msec, state: detect.StateBlocked, open: true}}
	s := scoreClaims(windows, []blockedClaim{{from: 5 * msec, to: 2000 * msec}})
	if s.missed != 0 || len(s.persistence) != 0 {
		t.Fatalf("missed %d persistence %v", s.missed, s.persistence)
	}
}

func TestClaimsFrom(t *testing.T) {
	got := claimsFrom([]verdictChange{{10 * msec, true}, {20 * msec, true}, {30 * msec, false}, {50 * msec, true}}, 100*msec)
	want := []blockedClaim{{10 * msec, 30 * msec}, {50 * msec, 100 * msec}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %v want %v", got, want)
	}
}

func TestSilence(t *testing.T) {
	at := []time.Duration{0, 500 * msec, 2000 * msec, 2100 * msec}
	got := silenceDetector(at, time.Second, 5000*msec)
	want := []blockedClaim{{1500 * msec, 2000 * msec}, {3100 * msec, 5000 * msec}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %v want %v", got, want)
	}
}

func TestTruthWindows(t *testing.T) {
	// A mock recording: offsets map to seconds one to one (offset 1000 = 1 s).
	at := func(off int) time.Duration { return time.Duration(off) * msec }
	// An action's own second places it (the replay paused as recorded).
	act := func(off int, sec float64) time.Duration { return time.Duration(sec * float64(time.Second)) }
	ip := func(i int) *int { return &i }
	fp := func(f float64) *float64 { return &f }
	labels := []recLabel{
		// working: evidence seen at 100, still on screen past the prompt.
		{Offset: 300, State: "working", Capture: "working/a", SeenOffset: 100, SeenFrom: "wait", GoneOffset: ip(2000), AnswerOffset: ip(1500), AnswerSeconds: fp(1.5)},
		// the prompt: seen 1000, left the screen at 1600 after the key at 1500.
		{Offset: 1200, State: "blocked", Capture: "blocked/b", SeenOffset: 1000, SeenFrom: "wait", GoneOffset: ip(1600), AnswerOffset: ip(1500), AnswerSeconds: fp(1.5)},
		// done: the person typed at 2.8 s, after 2600 bytes (no output since).
		{Offset: 2500, State: "done", Capture: "done/c", SeenOffset: 2400, SeenFrom: "wait", AnswerOffset: ip(2600), AnswerSeconds: fp(2.8)},
	}
	timeline := []tlEvent{
		{Offset: 300, Action: "capture working/a"},
		{Offset: 300, Action: `wait "Do you want"`, HeldOffset: ip(900)}, // the next awaited screen came at 900
		{Offset: 1200, Action: "capture blocked/b"},
		{Offset: 1500, Action: "key 1"},
		{Offset: 2500, Action: "capture done/c"},
	}
	next := func(off int) time.Duration { return at(off + 10) } // the next write, 10 bytes on
	got := truthWindows(labels, timeline, at, act, next, 3000*msec)
	want := []truthWin{
		{from: 100 * msec, to: 900 * msec, state: "working", what: "working/a"},
		{from: 1000 * msec, to: 1600 * msec, state: "blocked", what: "blocked/b"},
		{from: 2400 * msec, to: 2800 * msec, state: "done", what: "done/c"},
	}
	// A question whose text stays in the transcript: its evidence goes only
	// at 2500, after the done label's seen at 2400, so the prompt is taken
	// to have gone with the first output after the answer (1500 + 10).
	defer func() {
		labels[1].GoneOffset = ip(2500)
		want[1].to = 1510 * msec
		if got := truthWindows(labels, timeline, at, act, next, 3000*msec); got[1] != want[1] {
			t.Errorf("outlived evidence: got %+v want %+v", got[1], want[1])
		}
	}()
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("window %d: got %+v want %+v", i, got[i], want[i])
		}
	}
}

func TestStripAndPseudoScreen(t *testing.T) {
	raw := []byte("\x1b[?1049h\x1b[2J\x1b]0;title\x07one\r\n\x1b[1mtwo\x1b[0m\n\x1b(Bthree\x1bP1$r\x1b\\")
	if got := stripEscapes(raw); got != "one\ntwo\nthree" {
		t.Fatalf("stripped %q", got)
	}
	sc := pseudoScreen("a\n"+strings.Repeat("x", 25), 10, 3)
	if strings.Join(sc.Lines, "|") != "xxxxxxxxxx|xxxxxxxxxx|xxxxx" {
		t.Fatalf("lines %q", sc.Lines)
	}
}

func TestScoreDropOuts(t *testing.T) {
	windows := []truthWin{{from: 0, to: 1000 * msec, state: detect.StateBlocked, what: "p"}}
	// Blocked, a 2 ms flicker of something else, blocked again until the end.
	s := scoreClaims(windows, []blockedClaim{{from: 5 * msec, to: 500 * msec}, {from: 502 * msec, to: 1001 * msec}})
	if s.missed != 0 || s.dropouts != 1 || s.latency[0] != 5*msec || s.persistence[0] != msec {
		t.Fatalf("missed %d dropouts %d latency %v persistence %v", s.missed, s.dropouts, s.latency, s.persistence)
	}
}

func TestMergePrompts(t *testing.T) {
	ws := mergePrompts([]truthWin{
		{from: 0, to: 100, state: "working"},
		{from: 100, to: 500, state: "blocked", what: "a"},
		{from: 300, to: 700, state: "blocked", what: "b", open: true}, // no end of its own, inside a
		{from: 500, to: 900, state: "blocked", what: "c"},             // touches a: the form's next question
		{from: 1000, to: 1100, state: "blocked", what: "d"},
	})
	if len(ws) != 3 || ws[1].from != 100 || ws[1].to != 900 || ws[1].open || ws[1].what != "a+b+c" || ws[2].what != "d" {
		t.Fatalf("got %+v", ws)
	}
}

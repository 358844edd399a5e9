package sessions

import (
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
)

// A notice is for blocked, done and error, once per session and state in
// the cooldown; another session, or another state, has its own.
func TestAttentionOncePerStateInTheCooldown(t *testing.T) {
	a := NewAttention(time.Minute)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	idle, working := State{Name: Idle}, State{Name: Working}
	for _, name := range []string{Idle, Working, Exited, "starting"} {
		if a.Raise("s1", State{Name: name}, working, t0) {
			t.Errorf("%s raised a notice; only blocked, done and error deserve one", name)
		}
	}
	steps := []struct {
		session string
		st      string
		at      time.Duration
		want    bool
	}{
		{"s1", Done, 0, true},
		{"s1", Done, 10 * time.Second, false},   // the same state again in the cooldown
		{"s1", Blocked, 10 * time.Second, true}, // another state has its own
		{"s2", Done, 10 * time.Second, true},    // another session has its own
		{"s1", Error, 20 * time.Second, true},
		{"s1", Done, 59 * time.Second, false},
		{"s1", Done, 60 * time.Second, true}, // the cooldown is over
		{"s1", Done, 61 * time.Second, false},
	}
	for i, step := range steps {
		if got := a.Raise(step.session, State{Name: step.st}, idle, t0.Add(step.at)); got != step.want {
			t.Fatalf("step %d (%s %s at +%v): raised %v, want %v", i, step.session, step.st, step.at, got, step.want)
		}
	}
}

// A blocked state reported before the prompt was drawn raises again when
// the prompt with its options comes, even in the cooldown; a prompt that
// stays answerable does not.
func TestAttentionRaisesAgainForTheOptions(t *testing.T) {
	a := NewAttention(0) // 30 s
	t0 := time.Now()
	bare := State{Name: Blocked, Prompt: &detect.Prompt{Kind: "permission"}}
	full := State{Name: Blocked, Prompt: &detect.Prompt{Kind: "permission", Options: []detect.Option{{ID: "1", Label: "Yes"}}}}
	if !a.Raise("s1", bare, State{Name: Working}, t0) {
		t.Fatal("the first blocked raised nothing")
	}
	if !a.Raise("s1", full, bare, t0.Add(time.Second)) {
		t.Fatal("the prompt's options came a second later and raised nothing: the notice would have no options")
	}
	if a.Raise("s1", full, full, t0.Add(2*time.Second)) {
		t.Fatal("the same answerable prompt raised again in the cooldown")
	}
	if a.Raise("s1", bare, State{Name: Working}, t0.Add(29*time.Second)) {
		t.Fatal("blocked again 29 s after the last notice raised, inside the 30 s default cooldown")
	}
	if !a.Raise("s1", bare, State{Name: Working}, t0.Add(32*time.Second)) {
		t.Fatal("blocked 30 s after the last notice raised nothing: the default cooldown is 30 s")
	}
}

// Forget drops a session: the next notice of the same id is raised at
// once, and others keep their cooldown.
func TestAttentionForget(t *testing.T) {
	a := NewAttention(time.Hour)
	now := time.Now()
	a.Raise("s1", State{Name: Done}, State{}, now)
	a.Raise("s2", State{Name: Done}, State{}, now)
	a.Forget("s1")
	if !a.Raise("s1", State{Name: Done}, State{}, now.Add(time.Second)) {
		t.Fatal("a forgotten session's done was held back by its old cooldown")
	}
	if a.Raise("s2", State{Name: Done}, State{}, now.Add(time.Second)) {
		t.Fatal("forgetting s1 dropped s2's cooldown too")
	}
}

package sessions

import "time"

// Attention decides, for one viewer, when a state deserves a notice rather
// than only a badge: at most once per session and state (blocked, done,
// error) in a cooldown window. Each client of agentd keeps its own, so every
// window pops its notice once, however many windows watch. It is not safe
// for concurrent use; its owner serialises calls.
type Attention struct {
	cooldown time.Duration
	raised   map[string]map[string]time.Time // session → state → when
}

// NewAttention returns an Attention with the given cooldown (30 s when 0).
func NewAttention(cooldown time.Duration) *Attention {
	if cooldown <= 0 {
		cooldown = 30 * time.Second
	}
	return &Attention{cooldown: cooldown, raised: map[string]map[string]time.Time{}}
}

// Raise reports whether the change from prev to st for sessionID calls for
// a notice at now, and records it when it does.
func (a *Attention) Raise(sessionID string, st, prev State, now time.Time) bool {
	if st.Name != Blocked && st.Name != Done && st.Name != Error {
		return false
	}
	if st.Name == Blocked && prev.Name == Blocked && !answerable(prev.Prompt) && answerable(st.Prompt) {
		// The agent reported blocked before it drew its prompt; the notice
		// should carry the options, so raise it again.
		a.mark(sessionID, st.Name, now)
		return true
	}
	last, ok := a.raised[sessionID][st.Name]
	if ok && now.Sub(last) < a.cooldown {
		return false
	}
	a.mark(sessionID, st.Name, now)
	return true
}

func (a *Attention) mark(sessionID, state string, now time.Time) {
	m := a.raised[sessionID]
	if m == nil {
		m = map[string]time.Time{}
		a.raised[sessionID] = m
	}
	m[state] = now
}

// Forget drops what is known of a session that is gone.
func (a *Attention) Forget(sessionID string) { delete(a.raised, sessionID) }

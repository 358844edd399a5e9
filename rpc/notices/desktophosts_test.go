package notices

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/rpc/client"
	"github.com/agentd/agentd/rpc/protocol"
	"github.com/agentd/agentd/sessions"
)

// The order of what a host says is the feed's to get right: notifications
// may come before the listing made as the connection opens, a listing
// shows sessions long done, and a reconnection lists what is already up.
// A stand-in notification server (desktop_test.go) shows what would be
// raised; cmd/agentd's TestDesktopNoticesForOtherHosts runs the whole way
// over real ssh to a real dunst.
func TestHostFeedOrder(t *testing.T) {
	srv := newStandIn()
	d, log := newTestDesktop(t, srv, nil, nil)
	hs := &Hosts{desktop: d, view: func() View { return View{} }, log: d.log, feeds: map[string]*hostFeed{}}
	f := hs.feed("box")
	note := func(p protocol.StateNotification) {
		raw, _ := json.Marshal(p)
		f.Note(client.Notification{Method: protocol.NoteState, Params: raw})
	}
	ask := &protocol.Prompt{ID: "p1", Kind: "permission", Question: "Run it?", Options: []protocol.Option{{ID: "1", Label: "Yes"}, {ID: "2", Label: "No"}}}
	notices := func() []string {
		var out []string
		for _, c := range srv.calls {
			if c.op == "notify" {
				out = append(out, c.n.Title)
			}
		}
		return out
	}

	// Told blocked before the listing: nothing yet (no name); the listing
	// (made earlier, saying working) names it, and the state told stands.
	note(protocol.StateNotification{SessionID: "s1", Agent: "claude", State: sessions.Blocked, Since: "2026-12-07T10:00:02Z", Prompt: ask})
	time.Sleep(50 * time.Millisecond)
	if n := notices(); len(n) != 0 {
		t.Fatalf("a notice before the session's name was known: %q", n)
	}
	f.Connected(nil, []protocol.Session{
		{SessionID: "s1", Name: "api", Agent: "claude", State: sessions.Working, Since: "2026-12-07T10:00:01Z"},
		{SessionID: "s2", Name: "old", Agent: "codex", State: sessions.Done, Since: "2026-12-06T09:00:00Z"},
		{SessionID: "s3", Name: "web", Agent: "codex", State: sessions.Blocked, Since: "2026-12-07T09:00:00Z", Prompt: &protocol.Prompt{ID: "p3", Question: "Edit?"}},
	})
	srv.waitCalls(t, 2)
	got := notices()
	want := []string{"api on box needs you (claude)", "web on box needs you (codex)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("notices at the first listing: %q; want %q (s2 was done before it was followed)", got, want)
	}
	if c := srv.calls[0]; len(c.n.Actions) != 2 {
		t.Errorf("a host's notice carries %d buttons; want the prompt's 2 options (the host's guard decides)", len(c.n.Actions))
	}

	// The link drops and comes back: what is up stays up, nothing is
	// raised again, and a session no longer listed is gone.
	f.Lost(errors.New("the ssh connection ended"))
	log.waitFor(t, `msg="desktop: a host is unreachable" host=box err="the ssh connection ended"`)
	f.Connected(nil, []protocol.Session{
		{SessionID: "s1", Name: "api", Agent: "claude", State: sessions.Blocked, Since: "2026-12-07T10:00:02Z", Prompt: ask},
		{SessionID: "s2", Name: "old", Agent: "codex", State: sessions.Done, Since: "2026-12-06T09:00:00Z"},
	})
	calls := srv.waitCalls(t, 3)
	if c := calls[2]; c.op != "close" || c.id != 2 {
		t.Fatalf("after web left while the link was down: %+v; want its notice (2) closed", c)
	}
	log.waitFor(t, `msg="desktop: a host is reachable again" host=box`)
	time.Sleep(50 * time.Millisecond)
	if n := notices(); len(n) != 2 {
		t.Fatalf("notices after the reconnection: %q; want none raised again", n)
	}

	// A session begun since the listing: the feed lists again for its
	// name; where that listing fails, the notice names it by its id.
	host := &standInHost{list: []protocol.Session{{SessionID: "s9", Name: "docs", Agent: "gemini", State: sessions.Error}}}
	f.Lost(errors.New("gone"))
	f.connected(host, nil)
	note(protocol.StateNotification{SessionID: "s9", Agent: "gemini", State: sessions.Error, Message: "quota"})
	calls = srv.waitCalls(t, 5) // s1's notice closed (it is gone from the listing), s9's raised
	if c := calls[len(calls)-1]; c.op != "notify" || c.n.Title != "docs on box hit an error (gemini)" || !strings.Contains(c.n.Body, "quota") {
		t.Fatalf("the session begun since the listing: %+v", c)
	}
	host.err = errors.New("link broke")
	note(protocol.StateNotification{SessionID: "s10", Agent: "pi", State: sessions.Done, Outcome: "completed"})
	calls = srv.waitCalls(t, 6)
	if c := calls[len(calls)-1]; c.op != "notify" || c.n.Title != "s10 on box finished its turn (pi)" {
		t.Fatalf("a session whose listing failed: %+v", c)
	}
}

// standInHost answers session/list as a host's agentd would.
type standInHost struct {
	mu   sync.Mutex
	list []protocol.Session
	err  error
}

func (h *standInHost) Call(_ context.Context, method string, _, result any) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return h.err
	}
	if method != protocol.MethodList {
		return errors.New("the stand-in host answers session/list only")
	}
	result.(*protocol.ListResult).Sessions = h.list
	return nil
}

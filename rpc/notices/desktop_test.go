package notices

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/rpc/config"
	"github.com/agentd/agentd/sessions"
)

// These tests drive the desktop notices' decisions with a stand-in for the
// notification server: the cases here (a prompt that goes stale between
// the notice and the click, a server that never answers) cannot be made
// to happen on cue with a real one. cmd/agentd's TestDesktopNoticesThroughDunst
// runs the whole way on a real bus with a real server.

type call struct {
	op       string // notify, close
	id       uint32
	replaces uint32
	n        desktopNotice
}

type standInServer struct {
	mu    sync.Mutex
	calls []call
	next  uint32
	block chan struct{} // when set, Notify waits on it
	seen  chan struct{}
}

func newStandIn() *standInServer { return &standInServer{seen: make(chan struct{}, 100)} }

func (b *standInServer) Notify(ctx context.Context, n desktopNotice, replaces uint32) (uint32, error) {
	if b.block != nil {
		select {
		case <-b.block:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	b.mu.Lock()
	b.next++
	b.calls = append(b.calls, call{op: "notify", id: b.next, replaces: replaces, n: n})
	id := b.next
	b.mu.Unlock()
	b.seen <- struct{}{}
	return id, nil
}

func (b *standInServer) Close(_ context.Context, id uint32) error {
	b.mu.Lock()
	b.calls = append(b.calls, call{op: "close", id: id})
	b.mu.Unlock()
	b.seen <- struct{}{}
	return nil
}

func (b *standInServer) Actions() bool { return true }
func (b *standInServer) Shutdown()     {}

// waitCalls waits until the server has had n calls.
func (b *standInServer) waitCalls(t *testing.T, n int) []call {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		b.mu.Lock()
		calls := append([]call(nil), b.calls...)
		b.mu.Unlock()
		if len(calls) >= n {
			return calls
		}
		select {
		case <-b.seen:
		case <-deadline:
			t.Fatalf("the server had %d call(s) within 10 s, want %d: %+v", len(calls), n, calls)
		}
	}
}

// syncLog is a log the test can read while the desktop notices write it.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) waitFor(t *testing.T, sub string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		text := l.buf.String()
		l.mu.Unlock()
		if strings.Contains(text, sub) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q within 10 s; the log:\n%s", sub, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func promptInfo(id, promptID, question string) sessions.Info {
	info := blockedInfo(id)
	info.State.Prompt = &detect.Prompt{ID: promptID, Kind: "permission", Question: question,
		Options: []detect.Option{{ID: "1", Label: "Yes", Keys: "1"}, {ID: "2", Label: "No", Keys: "2"}}}
	return info
}

func newTestDesktop(t *testing.T, srv *standInServer, answer func(string, string, string) (sessions.State, error), current func(string) (sessions.Info, bool)) (*Desktop, *syncLog) {
	log := &syncLog{}
	d := newDesktop(config.Desktop{}, time.Minute, slog.New(slog.NewTextHandler(log, nil)),
		func(ev desktopEvents) (desktopBackend, error) { return srv, nil }, answer, current)
	t.Cleanup(d.Close)
	return d, log
}

var working = sessions.State{Name: sessions.Working}

// A click on a notice whose prompt went stale types nothing; the notice is
// replaced by one for the prompt on screen now.
func TestDesktopStaleActionReplacesTheNotice(t *testing.T) {
	srv := newStandIn()
	now := promptInfo("s1", "p2", "Really?")
	var answered []string
	var mu sync.Mutex
	answer := func(sid, pid, opt string) (sessions.State, error) {
		mu.Lock()
		answered = append(answered, sid+"/"+pid+"/"+opt)
		mu.Unlock()
		return sessions.State{}, &sessions.StaleError{Answered: pid, Current: now.State.Prompt}
	}
	d, log := newTestDesktop(t, srv, answer, func(string) (sessions.Info, bool) { return now, true })
	d.State(promptInfo("s1", "p1", "Deploy?"), working, View{})
	first := srv.waitCalls(t, 1)[0]
	if len(first.n.Actions) != 2 || first.n.Actions[0] != (desktopAction{Key: "1", Label: "Yes"}) || !strings.Contains(first.n.Body, "Deploy?") {
		t.Fatalf("the notice: %+v", first.n)
	}
	d.action(first.id, "1")
	log.waitFor(t, `msg="desktop: the notice's prompt is stale: nothing typed" session=s1 promptId=p1 option=1`)
	second := srv.waitCalls(t, 2)[1]
	if second.op != "notify" || second.replaces != first.id || !strings.Contains(second.n.Body, "Really?") {
		t.Fatalf("after the stale click: %+v, want a notice for \"Really?\" in place of %d", second, first.id)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(answered) != "[s1/p1/1]" {
		t.Fatalf("answers tried: %v", answered)
	}
}

// A notification server that never answers holds up no state change: the
// calls wait in a bounded queue, and what does not fit is dropped and
// logged.
func TestDesktopHungServerHoldsUpNothing(t *testing.T) {
	srv := newStandIn()
	srv.block = make(chan struct{})
	defer close(srv.block)
	d, log := newTestDesktop(t, srv, nil, nil)
	done := make(chan struct{})
	go func() {
		for i := 0; i < 500; i++ {
			d.State(promptInfo(fmt.Sprintf("s%d", i), "p", "Deploy?"), working, View{})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("500 state changes did not return within 20 s while the notification server hung")
	}
	log.waitFor(t, `msg="desktop: the notification server is not keeping up: dropped a call" call=Notify`)
}

// A focused client, or one whose setting is off, keeps notices away; the
// cooldown allows one notice per session and state; leaving blocked and
// session/seen take a notice down.
func TestDesktopFocusCooldownAndTakingDown(t *testing.T) {
	srv := newStandIn()
	d, log := newTestDesktop(t, srv, nil, nil)
	d.State(promptInfo("s1", "p1", "Deploy?"), working, View{Focused: 1})
	log.waitFor(t, `msg="desktop notice suppressed: focused client" session=s1 state=blocked focused=1`)
	d.State(promptInfo("s2", "p1", "Deploy?"), working, View{OptedOut: true, OptedOutBy: "vscode"})
	log.waitFor(t, `msg="desktop notice suppressed: a client turned them off" session=s2 state=blocked client=vscode`)

	d.State(promptInfo("s3", "p1", "Deploy?"), working, View{})
	shown := srv.waitCalls(t, 1)[0]
	d.State(sessions.Info{ID: "s3", State: working}, promptInfo("s3", "p1", "").State, View{})
	if c := srv.waitCalls(t, 2)[1]; c.op != "close" || c.id != shown.id {
		t.Fatalf("leaving blocked: %+v, want close %d", c, shown.id)
	}
	d.State(promptInfo("s3", "p2", "Again?"), working, View{})
	log.waitFor(t, `msg="desktop notice suppressed: cooldown" session=s3 state=blocked`)

	done := sessions.Info{ID: "s3", Name: "fix", Agent: "claude", State: sessions.State{Name: sessions.Done, Outcome: "completed"}}
	d.State(done, working, View{})
	n := srv.waitCalls(t, 3)[2]
	if n.op != "notify" || n.n.Title != "fix finished its turn (claude)" || n.n.Sticky {
		t.Fatalf("the done notice: %+v", n)
	}
	d.Seen("s3")
	if c := srv.waitCalls(t, 4)[3]; c.op != "close" || c.id != n.id {
		t.Fatalf("after seen: %+v, want close %d", c, n.id)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, c := range srv.calls {
		if c.op == "notify" && (strings.Contains(c.n.Title, "s1") || strings.Contains(c.n.Title, "s2")) {
			t.Errorf("a notice while focused or turned off: %+v", c)
		}
	}
}

// [desktop] notify = false makes no desktop notices.
func TestDesktopOff(t *testing.T) {
	if d := newDesktop(config.Desktop{Notify: new(bool)}, 0, testLog(t), nil, nil, nil); d != nil {
		t.Fatal("notify = false still made desktop notices")
	}
}

// A blocked notice and a [[notify]] event's text say what the prompt
// approves, and say so when agentd could not read it.
func TestNoticesNameTheSubject(t *testing.T) {
	p := &detect.Prompt{Kind: "permission", Question: "Do you want to proceed?", Options: []detect.Option{{ID: "1", Label: "Yes", Keys: "1"}},
		Subject: &detect.Subject{Kind: "command", Text: "rm -rf ~/projects <b>now</b>"}}
	info := sessions.Info{ID: "s1", Name: "fix", Agent: "claude", Cwd: "/src", State: sessions.State{Name: sessions.Blocked, Prompt: p}}
	if n := noticeFor(info, true); !strings.HasPrefix(n.Body, "command: rm -rf ~/projects <b>now</b>\nDo you want to proceed?") {
		t.Errorf("notice body %q, want the command first", n.Body)
	}
	if s := summary(info); !strings.Contains(s, "command: rm -rf ~/projects <b>now</b> — Do you want to proceed?") {
		t.Errorf("notify text %q, want the command before the question", s)
	}
	p.Subject = &detect.Subject{Kind: "other", Truncated: true}
	if n := noticeFor(info, true); !strings.Contains(n.Body, "could not read what this approves") {
		t.Errorf("notice body %q, want it to say the subject could not be read", n.Body)
	}
}

package notices

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/rpc/config"
	"github.com/agentd/agentd/sessions"
)

// Desktop notices: when a session turns blocked (or done, or error) and
// no connected client says it is focused, the person is somewhere else, so
// agentd raises an OS notification: freedesktop Notifications over D-Bus
// on Linux, with the prompt's options as buttons where the server has
// actions; Notification Center on macOS. A button answers through the
// same guard as runtime_answer. Every call to the notification server is
// made on one worker goroutine behind a bounded queue, so a server that
// hangs or fails holds up no session, no client and no daemon.

// desktopNotice is one notice as the OS layer shows it.
type desktopNotice struct {
	Title, Body string
	// Actions are buttons, key → label; the key comes back on a click.
	Actions []desktopAction
	// Sticky notices stay until agentd closes them (a prompt waits).
	Sticky bool
}

type desktopAction struct{ Key, Label string }

// desktopBackend is the OS's notification service (desktop_linux.go,
// desktop_darwin.go). Its calls may block; only the worker makes them.
type desktopBackend interface {
	// Notify shows n, in place of the notice replaces when not 0, and
	// returns the new notice's id.
	Notify(ctx context.Context, n desktopNotice, replaces uint32) (uint32, error)
	// Close takes a notice down.
	Close(ctx context.Context, id uint32) error
	// Actions reports whether notices can carry buttons.
	Actions() bool
	// Shutdown lets go of the service.
	Shutdown()
}

// desktopEvents is what a backend reports from the notification server.
type desktopEvents struct {
	Action func(id uint32, key string)
	Closed func(id uint32, reason uint32)
}

// errCannotClose: the OS's service cannot take a notice down (macOS).
var errCannotClose = errors.New("notices cannot be taken down on this OS")

// desktopCallTimeout bounds one call to the notification server.
const desktopCallTimeout = 5 * time.Second

// Desktop decides when a notice is due and keeps each session's
// notice up to date.
type Desktop struct {
	log    *slog.Logger
	states []string
	open   func(desktopEvents) (desktopBackend, error)
	// answer answers a session's prompt the way runtime_answer does.
	answer func(sessionID, promptID, optionID string) (sessions.State, error)
	// current is a session's state now, for a stale answer's follow-up.
	current func(sessionID string) (sessions.Info, bool)

	ops  chan func(desktopBackend)
	quit chan struct{}
	done chan struct{}
	// ready is closed once the OS's notification service is reached;
	// never where there is none (Ready).
	ready chan struct{}

	mu        sync.Mutex
	attention *sessions.Attention
	shown     map[string]*desktopShown // session → its notice
	byID      map[uint32]*desktopShown
}

// desktopShown is a notice on screen now.
type desktopShown struct {
	sessionID string
	state     string
	promptID  string
	id        uint32 // 0 until the server has answered Notify
	closed    bool   // taken down before the server answered
}

// NewDesktop starts the desktop notices with the OS's notification
// service; nil when [desktop] notify = false. answer answers a session's
// prompt the way runtime_answer does; current is a session's state now.
func NewDesktop(cfg config.Desktop, cooldown time.Duration, log *slog.Logger,
	answer func(sessionID, promptID, optionID string) (sessions.State, error), current func(sessionID string) (sessions.Info, bool)) *Desktop {
	return newDesktop(cfg, cooldown, log, openDesktop, answer, current)
}

func newDesktop(cfg config.Desktop, cooldown time.Duration, log *slog.Logger, open func(desktopEvents) (desktopBackend, error),
	answer func(sessionID, promptID, optionID string) (sessions.State, error), current func(sessionID string) (sessions.Info, bool)) *Desktop {
	if !cfg.Enabled() {
		log.Info("desktop notices are off ([desktop] notify = false)")
		return nil
	}
	if cfg.States == nil {
		cfg.States = slices.Clone(config.DesktopStates)
	}
	d := &Desktop{log: log, states: cfg.States, open: open, answer: answer, current: current, ops: make(chan func(desktopBackend), 64),
		quit: make(chan struct{}), done: make(chan struct{}), ready: make(chan struct{}), attention: sessions.NewAttention(cooldown),
		shown: map[string]*desktopShown{}, byID: map[uint32]*desktopShown{}}
	go d.run()
	return d
}

// run connects to the notification service, then makes every call in
// order. Without a service it logs once and drops what comes.
func (d *Desktop) run() {
	defer close(d.done)
	b, err := d.open(desktopEvents{Action: d.action, Closed: d.closedByServer})
	if err != nil {
		d.log.Warn("desktop notices off", "err", err)
	} else {
		d.log.Info("desktop notices on", "buttons", b.Actions())
		defer b.Shutdown()
		close(d.ready)
	}
	for {
		select {
		case op := <-d.ops:
			if b != nil {
				op(b)
			}
		case <-d.quit:
			return
		}
	}
}

// do queues op for the worker; a full queue drops it, and says so.
func (d *Desktop) do(what string, op func(desktopBackend)) {
	select {
	case d.ops <- op:
	default:
		d.log.Warn("desktop: the notification server is not keeping up: dropped a call", "call", what)
	}
}

// Ready is closed once the OS's notification service is reached; never
// where there is none.
func (d *Desktop) Ready() <-chan struct{} { return d.ready }

// Close ends the worker; notices on screen stay (they say what was).
func (d *Desktop) Close() {
	if d == nil {
		return
	}
	select {
	case <-d.quit:
	default:
		close(d.quit)
	}
	<-d.done
}

// View is what the server knows of its clients at a state change.
type View struct {
	Focused    int  // clients that say they are focused
	OptedOut   bool // a client's setting turned desktop notices off
	OptedOutBy string
}

// State is called on every state change of a session.
func (d *Desktop) State(info sessions.Info, previous sessions.State, view View) {
	st := info.State
	promptID := ""
	if st.Prompt != nil {
		promptID = st.Prompt.ID
	}
	d.mu.Lock()
	old := d.shown[info.ID]
	if old != nil && old.state == st.Name && old.promptID == promptID {
		d.mu.Unlock()
		return // the same notice is up
	}
	// A notice that is up is replaced while the session still needs the
	// person (a new prompt), and taken down when it does not.
	replace := old != nil && st.Name == sessions.Blocked && slices.Contains(d.states, st.Name)
	if old != nil && !replace {
		d.takeDown(old)
	}
	if !slices.Contains(d.states, st.Name) {
		d.mu.Unlock()
		return
	}
	switch {
	case view.OptedOut:
		d.mu.Unlock()
		if old != nil {
			d.takeDownLocked(old)
		}
		d.log.Info("desktop notice suppressed: a client turned them off", "session", info.ID, "state", st.Name, "client", view.OptedOutBy)
		return
	case view.Focused > 0:
		d.mu.Unlock()
		if replace {
			d.takeDownLocked(old)
		}
		d.log.Info("desktop notice suppressed: focused client", "session", info.ID, "state", st.Name, "focused", view.Focused)
		return
	}
	if !replace && !d.attention.Raise(info.ID, st, previous, time.Now()) {
		d.mu.Unlock()
		d.log.Info("desktop notice suppressed: cooldown", "session", info.ID, "state", st.Name)
		return
	}
	sh := &desktopShown{sessionID: info.ID, state: st.Name, promptID: promptID}
	d.shown[info.ID] = sh
	var replaces *desktopShown
	if replace {
		replaces = old
		old.closed = true
	}
	d.mu.Unlock()
	d.show(sh, replaces, info)
}

// takeDownLocked is takeDown for a caller that does not hold d.mu.
func (d *Desktop) takeDownLocked(sh *desktopShown) {
	d.mu.Lock()
	d.takeDown(sh)
	d.mu.Unlock()
}

// takeDown closes sh's notice; d.mu is held.
func (d *Desktop) takeDown(sh *desktopShown) {
	if d.shown[sh.sessionID] == sh {
		delete(d.shown, sh.sessionID)
	}
	if sh.closed {
		return
	}
	sh.closed = true
	d.do("CloseNotification", func(b desktopBackend) {
		d.mu.Lock()
		id := sh.id
		delete(d.byID, id)
		d.mu.Unlock()
		if id == 0 {
			return // its Notify failed
		}
		ctx, cancel := context.WithTimeout(context.Background(), desktopCallTimeout)
		defer cancel()
		if err := b.Close(ctx, id); errors.Is(err, errCannotClose) {
			return
		} else if err != nil {
			d.log.Warn("desktop: closing a notice failed", "session", sh.sessionID, "err", err)
			return
		}
		d.log.Info("desktop notice closed", "session", sh.sessionID, "id", id)
	})
}

// show queues the notice for sh, in place of replaces' when not nil.
func (d *Desktop) show(sh, replaces *desktopShown, info sessions.Info) {
	d.do("Notify", func(b desktopBackend) {
		n := noticeFor(info, b.Actions())
		if _, _, remote := RemoteKey(info.ID); remote && b.Actions() && info.State.Name == sessions.Blocked && info.State.Prompt != nil {
			// Which options have keys is the other machine's to know: it
			// gets every button, and its guard refuses what it cannot type.
			n.Actions = promptActions(info.State.Prompt, true)
		}
		d.mu.Lock()
		var rid uint32
		if replaces != nil {
			rid = replaces.id
			delete(d.byID, rid)
		}
		gone := sh.closed
		d.mu.Unlock()
		if gone {
			return // taken down before it was shown
		}
		ctx, cancel := context.WithTimeout(context.Background(), desktopCallTimeout)
		defer cancel()
		id, err := b.Notify(ctx, n, rid)
		if err != nil {
			d.log.Warn("desktop: a notice failed", "session", sh.sessionID, "state", sh.state, "err", err)
			return
		}
		d.mu.Lock()
		sh.id = id
		d.byID[id] = sh
		d.mu.Unlock()
		d.log.Info("desktop notice shown", "session", sh.sessionID, "state", sh.state, "id", id, "buttons", len(n.Actions))
	})
}

// noticeFor words the notice for a session's state.
func noticeFor(info sessions.Info, buttons bool) desktopNotice {
	st := info.State
	name := info.Name
	if name == "" {
		name = info.ID
	}
	n := desktopNotice{Body: info.Cwd}
	switch st.Name {
	case sessions.Blocked:
		n.Title = fmt.Sprintf("%s needs you (%s)", name, info.Agent)
		n.Sticky = true
		if p := st.Prompt; p != nil {
			n.Body = p.Question + "\n" + info.Cwd
			if line := subjectLine(p.Subject); line != "" {
				n.Body = line + "\n" + n.Body
			}
			if buttons {
				n.Actions = promptActions(p, st.Source == sessions.SourceACP)
			}
		}
	case sessions.Done:
		what := "finished its turn"
		if st.Outcome != "" && st.Outcome != "completed" {
			what = "stopped (" + st.Outcome + ")"
		}
		n.Title = fmt.Sprintf("%s %s (%s)", name, what, info.Agent)
	case sessions.Error:
		n.Title = fmt.Sprintf("%s hit an error (%s)", name, info.Agent)
		if st.Message != "" {
			n.Body = st.Message + "\n" + info.Cwd
		}
	}
	return n
}

// subjectLine is what a prompt asks to approve, on one line for a notice:
// "command: rm -rf build", with "(cut)" where agentd could not see it all.
func subjectLine(s *detect.Subject) string {
	if s == nil {
		return ""
	}
	line := s.Kind + ": " + s.Text
	if s.Text == "" {
		line = "(agentd could not read what this approves: look at the terminal)"
	}
	if s.Truncated && s.Text != "" {
		line += " (cut)"
	}
	return line
}

// promptActions are the buttons for the options agentd can answer: those
// whose keys the manifest names, or any of an ACP permission.
func promptActions(p *detect.Prompt, acp bool) []desktopAction {
	var out []desktopAction
	for _, o := range p.Options {
		if o.Keys == "" && !acp {
			continue
		}
		out = append(out, desktopAction{Key: o.ID, Label: o.Label})
	}
	return out
}

// Seen takes down a session's notice: the person looked at it.
func (d *Desktop) Seen(sessionID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if sh := d.shown[sessionID]; sh != nil {
		d.takeDown(sh)
	}
}

// Exited takes down a session's notice and forgets it.
func (d *Desktop) Exited(sessionID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if sh := d.shown[sessionID]; sh != nil {
		d.takeDown(sh)
	}
	d.attention.Forget(sessionID)
}

// action is a click on a notice's button: the prompt the notice showed is
// answered through the guard of runtime_answer, on its own goroutine (an
// answer waits for the agent). The server's signal can come before the
// Notify that showed the notice has returned its id to show, so the click
// is looked up on the worker, after that call (a click on a notice just
// shown was taken for one agentd no longer tracks, under load).
func (d *Desktop) action(id uint32, key string) {
	d.do("ActionInvoked", func(desktopBackend) { d.clicked(id, key) })
}

func (d *Desktop) clicked(id uint32, key string) {
	d.mu.Lock()
	sh := d.byID[id]
	d.mu.Unlock()
	if sh == nil || sh.promptID == "" {
		d.log.Info("desktop: an action on a notice agentd no longer tracks", "id", id, "action", key)
		return
	}
	go func() {
		st, err := d.answer(sh.sessionID, sh.promptID, key)
		var stale *sessions.StaleError
		switch {
		case errors.As(err, &stale):
			d.log.Warn("desktop: the notice's prompt is stale: nothing typed", "session", sh.sessionID, "promptId", sh.promptID, "option", key)
			d.refresh(sh)
		case err != nil:
			d.log.Warn("desktop: answering from the notice failed", "session", sh.sessionID, "option", key, "err", err)
		default:
			d.log.Info("desktop: answered from the notice", "session", sh.sessionID, "promptId", sh.promptID, "option", key, "state", st.Name)
		}
	}()
}

// refresh replaces a stale notice with one for the session's state now.
func (d *Desktop) refresh(sh *desktopShown) {
	info, ok := d.current(sh.sessionID)
	d.mu.Lock()
	if d.shown[sh.sessionID] != sh {
		d.mu.Unlock()
		return // already replaced or taken down by a state change
	}
	if !ok || info.State.Name != sessions.Blocked {
		d.takeDown(sh)
		d.mu.Unlock()
		return
	}
	fresh := &desktopShown{sessionID: sh.sessionID, state: info.State.Name}
	if info.State.Prompt != nil {
		fresh.promptID = info.State.Prompt.ID
	}
	d.shown[sh.sessionID] = fresh
	sh.closed = true
	d.mu.Unlock()
	d.show(fresh, sh, info)
}

// closedByServer: the person dismissed the notice, or it expired. Looked
// up on the worker, after the Notify that showed it, as a click is.
func (d *Desktop) closedByServer(id uint32, reason uint32) {
	d.do("NotificationClosed", func(desktopBackend) { d.closed(id, reason) })
}

func (d *Desktop) closed(id uint32, reason uint32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	sh := d.byID[id]
	if sh == nil {
		return
	}
	delete(d.byID, id)
	sh.closed = true
	if d.shown[sh.sessionID] == sh {
		delete(d.shown, sh.sessionID)
	}
	d.log.Info("desktop notice closed by the notification server", "session", sh.sessionID, "id", id, "reason", reason)
}

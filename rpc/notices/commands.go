package notices

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentd/agentd/detect"
	"github.com/agentd/agentd/rpc/config"
	"github.com/agentd/agentd/sessions"
)

// Notify commands tell the person where they are, when they are not
// looking at an editor: $XDG_CONFIG_HOME/agentd/config.toml's [[notify]]
// entries run a command with the event as JSON on its stdin, or POST the
// JSON to a URL, when a session turns to one of the entry's states. Each
// entry has a timeout and at most one run in flight (a run still going
// when the next event comes makes that event skipped, and logged); a
// failure is logged with the entry's name. Nothing here ever holds up a
// session: runs are their own goroutines. docs/notify.md has examples.

// NotifyEvent is the JSON a notify entry is given.
type NotifyEvent struct {
	SessionID string         `json:"sessionId"`
	Name      string         `json:"name"`
	Agent     string         `json:"agent"`
	Cwd       string         `json:"cwd"`
	State     string         `json:"state"`
	Previous  string         `json:"previous"`
	Outcome   string         `json:"outcome,omitempty"`
	Reason    string         `json:"reason"`
	Since     string         `json:"since"`
	Prompt    *detect.Prompt `json:"prompt,omitempty"`
	Message   string         `json:"message,omitempty"`
	// Text is a one-line summary for a person, the field a Slack
	// webhook shows.
	Text string `json:"text"`
}

// Commands runs the [[notify]] entries on state changes.
type Commands struct {
	log     *slog.Logger
	entries []*notifyRunner
	ctx     context.Context // ends every run at close
	cancel  context.CancelFunc

	mu        sync.Mutex
	attention *sessions.Attention
}

type notifyRunner struct {
	config.Notify
	ctx    context.Context
	log    *slog.Logger
	mu     sync.Mutex
	flying bool
	wg     sync.WaitGroup
}

func NewCommands(entries []config.Notify, cooldown time.Duration, log *slog.Logger) *Commands {
	if len(entries) == 0 {
		return nil
	}
	a := &Commands{log: log, attention: sessions.NewAttention(cooldown)}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	for _, e := range entries {
		a.entries = append(a.entries, &notifyRunner{Notify: e, ctx: a.ctx, log: log})
	}
	return a
}

// State is called on every state change; it runs the entries that want
// this state, at most once per session and state in the cooldown.
func (a *Commands) State(info sessions.Info, previous sessions.State) {
	st := info.State
	var want []*notifyRunner
	for _, r := range a.entries {
		if slices.Contains(r.States, st.Name) {
			want = append(want, r)
		}
	}
	if len(want) == 0 {
		return
	}
	a.mu.Lock()
	raise := a.attention.Raise(info.ID, st, previous, time.Now())
	a.mu.Unlock()
	if !raise && st.Name != sessions.Exited {
		return
	}
	ev := NotifyEvent{
		SessionID: info.ID, Name: info.Name, Agent: info.Agent, Cwd: info.Cwd, State: st.Name,
		Previous: previous.Name, Outcome: st.Outcome, Reason: st.Reason, Since: stamp(st.Since),
		Prompt: st.Prompt, Message: st.Message, Text: summary(info),
	}
	body, _ := json.Marshal(ev)
	for _, r := range want {
		r.fire(body)
	}
}

// summary is one line for a person: who, where, what.
func summary(info sessions.Info) string {
	st := info.State
	what := st.Name
	if st.Outcome != "" {
		what += " (" + st.Outcome + ")"
	}
	s := fmt.Sprintf("agentd: %s %q in %s is %s", info.Agent, info.Name, info.Cwd, what)
	if p := st.Prompt; p != nil {
		var opts []string
		for _, o := range p.Options {
			opts = append(opts, o.Label)
		}
		s += ": "
		if line := subjectLine(p.Subject); line != "" {
			s += line + " — "
		}
		s += p.Question
		if len(opts) > 0 {
			s += " [" + strings.Join(opts, " / ") + "]"
		}
	} else if st.Message != "" {
		s += ": " + st.Message
	}
	return s
}

// fire starts one run unless one is still in flight.
func (r *notifyRunner) fire(body []byte) {
	r.mu.Lock()
	if r.flying {
		r.mu.Unlock()
		r.log.Warn("notify: skipped an event: the previous run still goes", "notify", r.Name)
		return
	}
	r.flying = true
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		defer func() {
			r.mu.Lock()
			r.flying = false
			r.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(r.ctx, r.Limit)
		defer cancel()
		var err error
		if r.URL != "" {
			err = r.post(ctx, body)
		} else {
			err = r.run(ctx, body)
		}
		if err != nil {
			r.log.Warn("notify: failed", "notify", r.Name, "err", err)
		} else {
			r.log.Info("notify: sent", "notify", r.Name)
		}
	}()
}

func (r *notifyRunner) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s", r.URL, resp.Status)
	}
	return nil
}

// run runs the command in a process group of its own, so that at its
// timeout the command and all it started are ended.
func (r *notifyRunner) run(ctx context.Context, body []byte) error {
	cmd := exec.Command(r.Command[0], r.Command[1:]...)
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s: %w: %s", r.Command[0], err, strings.TrimSpace(stderr.String()))
		}
		return nil
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		if r.ctx.Err() != nil {
			return fmt.Errorf("%s: ended with agentd", r.Command[0])
		}
		return fmt.Errorf("%s: killed at its timeout of %s", r.Command[0], r.Limit)
	}
}

// wait waits for every run in flight.
func (a *Commands) wait() {
	for _, r := range a.entries {
		r.wg.Wait()
	}
}

// Close ends every run in flight, as agentd ends: a notify command does
// not outlive the daemon that started it.
func (a *Commands) Close() {
	if a == nil {
		return
	}
	a.cancel()
	a.wait()
}

// stamp is t as the protocol writes times; "" for none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

//go:build unix

// Package demo is `agentd demo`: agentd's whole idea in one command,
// driven through `agentd --stdio` as an editor would drive it.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/agentd/agentd/rpc/protocol"
)

// Run shows agentd's whole idea in one command: it starts `agentd
// --stdio` as an editor would (which starts a daemon of the demo's own),
// hosts the demo agent in a PTY, prints every state agentd pushes, closes
// the "editor" while the agent works and opens a new one that finds it
// blocked, and answers the permission prompt with runtime_answer — after
// showing that runtime_send is refused meanwhile.
func Run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	answer := fs.String("answer", "1", "which option to choose at the permission prompt (1 yes, 3 no)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "agentd demo:", err)
		return 1
	}
	// The demo's own daemon, in a folder of its own: the person's real
	// daemon and sessions, if any, are not touched.
	run, err := os.MkdirTemp("", "agentd-demo-run-")
	if err != nil {
		fmt.Fprintln(stderr, "agentd demo:", err)
		return 1
	}
	defer os.RemoveAll(run)
	d := &demo{out: stdout, start: time.Now(), states: make(chan protocol.StateNotification, 64), socket: filepath.Join(run, "agentd.sock")}
	if err := d.connect(exe); err != nil {
		fmt.Fprintln(stderr, "agentd demo:", err)
		return 1
	}
	defer d.stop()
	// Ctrl-C ends the demo's daemon and agent too, rather than leave them.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		d.stop()
		os.RemoveAll(run)
		os.Exit(130)
	}()
	if err := d.run(exe, *answer); err != nil {
		fmt.Fprintln(stderr, "agentd demo:", err)
		return 1
	}
	return 0
}

type demo struct {
	out    io.Writer
	socket string
	cmd    *exec.Cmd
	conn   *jsonrpc2.Conn
	start  time.Time
	states chan protocol.StateNotification
	mu     sync.Mutex
}

// connect starts `agentd --stdio` for the demo's daemon, as an editor
// window does, and sends initialize.
func (d *demo) connect(exe string) error {
	d.cmd = exec.Command(exe, "--stdio", "--socket", d.socket, "--idle-timeout", "1m")
	in, err := d.cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := d.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := d.cmd.Start(); err != nil {
		return err
	}
	d.conn = jsonrpc2.NewConn(context.Background(), protocol.NewStream(stdout, in, in),
		jsonrpc2.HandlerWithError(d.handle), jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	return nil
}

func (d *demo) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	if req.Method == protocol.NoteState && req.Params != nil {
		var s protocol.StateNotification
		if json.Unmarshal(*req.Params, &s) == nil {
			d.states <- s
		}
	}
	return nil, nil
}

func (d *demo) say(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.out, "%6.2fs  %s\n", time.Since(d.start).Seconds(), fmt.Sprintf(format, args...))
}

func (d *demo) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	return d.conn.Call(ctx, method, params, result)
}

// words says a state (and the outcome of done) the way a person would.
func words(state, outcome string) string {
	switch state {
	case "working":
		return "is working"
	case "blocked":
		return "NEEDS YOU"
	case "idle":
		return "is idle, waiting for a task"
	case "done":
		return "finished its turn (" + outcome + "), not yet seen"
	case "exited":
		return "has exited"
	case "error":
		return "reports an error"
	}
	return state
}

// await prints states until one named want arrives.
func (d *demo) await(want string) (protocol.StateNotification, error) {
	timeout := time.After(20 * time.Second)
	for {
		select {
		case s := <-d.states:
			note := ""
			if s.Attention {
				note = "  ← an editor would pop a notice now"
			}
			d.say("state: the agent %s   [%s via %s]%s", words(s.State, s.Outcome), s.Reason, s.StateSource, note)
			if s.State == want {
				return s, nil
			}
		case <-timeout:
			return protocol.StateNotification{}, fmt.Errorf("no %q state within 20s", want)
		}
	}
}

func (d *demo) run(exe, answer string) error {
	hello := protocol.InitializeParams{ClientInfo: &protocol.ClientInfo{Name: "agentd demo"}}
	var init protocol.InitializeResult
	if err := d.call(protocol.MethodInitialize, hello, &init); err != nil {
		return err
	}
	d.say("agentd %s is up: `agentd --stdio` (what an editor starts, pid %d) forwards JSON-RPC to the daemon (pid %d), which owns every session; it knows %d agents", init.ServerInfo.Version, d.cmd.Process.Pid, init.Daemon.Pid, len(init.Agents))
	dir, err := os.MkdirTemp("", "agentd-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var sess protocol.Session
	if err := d.call(protocol.MethodSpawn, protocol.SpawnParams{Argv: []string{exe, "demo-agent"}, Cwd: dir, Cols: 100, Rows: 30}, &sess); err != nil {
		return err
	}
	d.say("spawned the demo agent in a PTY: session %s, pid %d, recognised as %q", sess.SessionID, sess.Pid, sess.Agent)
	if _, err := d.await("idle"); err != nil {
		return err
	}
	d.say("%s: typing a task for the agent", protocol.MethodSend)
	if err := d.call(protocol.MethodSend, protocol.SendParams{SessionID: sess.SessionID, Text: "Add a NOTES.md file", Submit: true}, nil); err != nil {
		return err
	}
	if _, err := d.await("working"); err != nil {
		return err
	}
	d.say("closing this editor window mid-turn, as a VS Code reload or a quit Neovim does")
	d.disconnect()
	d.say("reopening it: a new `agentd --stdio` connects to the same daemon")
	if err := d.connect(exe); err != nil {
		return err
	}
	if err := d.call(protocol.MethodInitialize, hello, nil); err != nil {
		return err
	}
	var list protocol.ListResult
	if err := d.call(protocol.MethodList, nil, &list); err != nil {
		return err
	}
	for _, s := range list.Sessions {
		d.say("%s: %s is still there and %s", protocol.MethodList, s.SessionID, words(s.State, s.Outcome))
	}
	blocked, err := d.awaitPrompt(list.Sessions, sess.SessionID)
	if err != nil {
		return err
	}
	d.say("the prompt: %q", blocked.Prompt.Question)
	for _, o := range blocked.Prompt.Options {
		d.say("    option %s: %s", o.ID, o.Label)
	}
	err = d.call(protocol.MethodSend, protocol.SendParams{SessionID: sess.SessionID, Text: "y", Submit: true}, nil)
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) {
		d.say("%s while blocked is refused (code %d): %s", protocol.MethodSend, rpcErr.Code, rpcErr.Message)
	}
	d.say("%s: choosing option %s on prompt %s", protocol.MethodAnswer, answer, blocked.Prompt.ID)
	var res protocol.AnswerResult
	if err := d.call(protocol.MethodAnswer, protocol.AnswerParams{SessionID: sess.SessionID, PromptID: blocked.Prompt.ID, OptionID: answer}, &res); err != nil {
		return err
	}
	d.say("the answer was typed; the agent is now %s", res.State)
	done, err := d.await("done")
	if err != nil {
		return err
	}
	d.say("%s: the person looked at it", protocol.MethodSeen)
	if err := d.call(protocol.MethodSeen, protocol.SessionRef{SessionID: sess.SessionID}, nil); err != nil {
		return err
	}
	if _, err := d.await("idle"); err != nil {
		return err
	}
	var screen protocol.ReadResult
	if err := d.call(protocol.MethodRead, protocol.SessionRef{SessionID: sess.SessionID}, &screen); err == nil {
		d.say("the agent's screen now (%s):", protocol.MethodRead)
		for _, r := range screen.Rows {
			if strings.TrimSpace(r) != "" {
				d.mu.Lock()
				fmt.Fprintf(d.out, "          │ %s\n", r)
				d.mu.Unlock()
			}
		}
	}
	d.say("%s: ending the agent (only a person's kill or the agent itself ends a session)", protocol.MethodKill)
	if err := d.call(protocol.MethodKill, protocol.KillParams{SessionID: sess.SessionID}, nil); err != nil {
		return err
	}
	if _, err := d.await("exited"); err != nil {
		return err
	}
	d.say("%s: ending the demo's daemon (your own daemon, if one runs, was not touched)", protocol.MethodStop)
	if err := d.call(protocol.MethodStop, protocol.StopParams{}, nil); err != nil {
		return err
	}
	d.say("demo complete: the turn ended %s. Editors get the same stream: see docs/protocol.md; try `agentd run -- bash` and `agentd ls`", done.Outcome)
	return nil
}

// awaitPrompt returns the session's prompt: from the list when it is
// already blocked there with its options, else from the states that follow.
func (d *demo) awaitPrompt(list []protocol.Session, id string) (protocol.StateNotification, error) {
	for _, s := range list {
		if s.SessionID == id && s.State == "blocked" && s.Prompt != nil && len(s.Prompt.Options) > 0 {
			return protocol.StateNotification{SessionID: s.SessionID, State: s.State, Prompt: s.Prompt}, nil
		}
	}
	for {
		s, err := d.await("blocked")
		if err != nil || (s.Prompt != nil && len(s.Prompt.Options) > 0) {
			return s, err
		}
	}
}

// disconnect closes the window's agentd --stdio as an editor that goes
// away does: its stdin closes and it exits; the daemon keeps the sessions.
func (d *demo) disconnect() {
	_ = d.conn.Close()
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = d.cmd.Process.Kill()
	}
}

// stop ends the demo's daemon and whatever it still hosts (after a
// failure, the demo agent), then the window.
func (d *demo) stop() {
	_ = d.call(protocol.MethodStop, protocol.StopParams{Force: true}, nil)
	d.disconnect()
}

//go:build unix

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/agentd/agentd/rpc/protocol"
)

// attach shows a session's screen in this terminal and types what the
// person types into it, until the detach key (the agent runs on) or the
// agent's end. It is a client like any other: other windows keep watching.

// Terminal modes an agent may have switched on in the person's terminal
// through its output; they are switched off again on leaving, with the
// alternate screen agentd attached in.
const leaveModes = "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l\x1b[?2004l\x1b[<u\x1b[0m\x1b[?25h\x1b[?1049l"

// detachKeys maps a --detach-key name to the byte a terminal sends for it.
var detachKeys = map[string]byte{`ctrl-\`: 0x1c, "ctrl-]": 0x1d, "ctrl-^": 0x1e, "ctrl-_": 0x1f, "ctrl-g": 0x07, "ctrl-q": 0x11}

// Attach is `agentd attach`: a session's screen in this terminal.
func Attach(args []string, stdout, stderr io.Writer) int {
	fs, socket := Flags("attach", stderr)
	host := HostFlag(fs)
	key := fs.String("detach-key", `ctrl-\`, "the key that detaches, leaving the agent running: ctrl-\\, ctrl-], ctrl-^, ctrl-_, ctrl-g or ctrl-q")
	pos, err := ParseArgs(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: agentd attach SESSION [--detach-key ctrl-\\]")
		return ExitUsage
	}
	detach, ok := detachKeys[strings.ToLower(*key)]
	if !ok {
		fmt.Fprintf(stderr, "agentd attach: unknown detach key %q\n", *key)
		return ExitUsage
	}
	k, ref, err := DialRef(*socket, *host, pos[0], false, stderr)
	if err != nil {
		return Fail(stderr, "attach", err)
	}
	defer k.Close()
	s, err := k.Find(ref)
	if err != nil {
		return Fail(stderr, "attach", err)
	}
	return k.attach(s, detach, *key, stdout, stderr)
}

// Run is `agentd run`: start a session in the daemon and attach to it
// (a script, without a terminal, gets its id).
func Run(args []string, stdout, stderr io.Writer) int {
	fs, socket := Flags("run", stderr)
	host := HostFlag(fs)
	dir := fs.String("cwd", "", "the folder the agent runs in (default: this one; on another host, the login folder there)")
	name := fs.String("name", "", "the session's name (default: the agent's)")
	agent := fs.String("agent", "", "the agent's manifest (default: identified from ARGV)")
	key := fs.String("detach-key", `ctrl-\`, "the key that detaches, leaving the agent running")
	pos, err := ParseArgs(fs, args)
	if err != nil {
		return ExitUsage
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, "usage: agentd run [--name N] [--agent A] -- ARGV...")
		return ExitUsage
	}
	detach, ok := detachKeys[strings.ToLower(*key)]
	if !ok {
		fmt.Fprintf(stderr, "agentd run: unknown detach key %q\n", *key)
		return ExitUsage
	}
	k, err := dialHost(*socket, *host, true, stderr)
	if err != nil {
		return Fail(stderr, "run", err)
	}
	defer k.Close()
	cwd := *dir
	if cwd == "" && k.host == "" {
		// This folder means nothing on another machine: there the
		// daemon takes the folder ssh logged in to.
		cwd, _ = os.Getwd()
	}
	spawn := protocol.SpawnParams{Argv: pos, Cwd: cwd, Name: *name, Agent: *agent}
	tty := term.IsTerminal(int(os.Stdin.Fd()))
	if tty {
		if w, h, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
			spawn.Cols, spawn.Rows = w, h
		}
	}
	var s protocol.Session
	if err := k.Call(protocol.MethodSpawn, spawn, &s); err != nil {
		return Fail(stderr, "run", err)
	}
	if !tty {
		// A script: say which session it is and leave it running.
		fmt.Fprintln(stdout, s.SessionID)
		return ExitOK
	}
	return k.attach(s, detach, *key, stdout, stderr)
}

// attach runs the terminal view of s until detach or the session's end.
func (k *Conn) attach(s protocol.Session, detach byte, keyName string, stdout, stderr io.Writer) int {
	in := int(os.Stdin.Fd())
	if !term.IsTerminal(in) {
		fmt.Fprintln(stderr, "agentd attach: stdin is not a terminal")
		return ExitUsage
	}
	if s.Exit != nil {
		fmt.Fprintf(stderr, "agentd attach: %s has exited (%s)\n", s.SessionID, stateWords(s.State, s.Outcome, s.Exit))
		return ExitFailed
	}
	old, err := term.MakeRaw(in)
	if err != nil {
		return Fail(stderr, "attach", err)
	}
	fmt.Fprint(stdout, "\x1b[?1049h")
	restore := func() {
		fmt.Fprint(stdout, leaveModes)
		_ = term.Restore(in, old)
	}
	resize := func() {
		if w, h, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
			_ = k.Call(protocol.MethodResize, protocol.ResizeParams{SessionID: s.SessionID, Cols: w, Rows: h}, nil)
		}
	}
	resize()
	if err := k.Call(protocol.MethodSubscribe, protocol.SubscribeParams{SessionID: s.SessionID, Output: true}, nil); err != nil {
		restore()
		return Fail(stderr, "attach", err)
	}
	// The person is looking at it now: a finished turn is seen, for every
	// client, as when an editor opens the session's terminal.
	_ = k.Call(protocol.MethodSeen, protocol.SessionRef{SessionID: s.SessionID}, nil)
	// While attached the person is at this terminal: no desktop notices.
	// Detaching ends the connection, and a client that has gone counts
	// as unfocused.
	_ = k.Call(protocol.MethodFocus, protocol.FocusParams{Focused: true}, nil)

	// The person's keys, read on their own goroutine.
	keys := make(chan []byte)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				keys <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				close(keys)
				return
			}
		}
	}()
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	// kitty's keyboard protocol, which an agent may have switched on in the
	// person's terminal, sends the detach key as CSI <code>;5u.
	code := int(detach) + 0x40 // ctrl-\ is '\'
	if detach <= 0x1a {
		code = int(detach) + 0x60 // ctrl-g is 'g'
	}
	kittyDetach := []byte(fmt.Sprintf("\x1b[%d;5u", code))
	for {
		for _, n := range k.take() {
			switch n.Method {
			case protocol.NoteOutput:
				var o protocol.OutputNotification
				if json.Unmarshal(n.Params, &o) == nil && o.SessionID == s.SessionID {
					_, _ = io.WriteString(stdout, o.Data)
				}
			case protocol.NoteExited:
				var e protocol.ExitedNotification
				if json.Unmarshal(n.Params, &e) == nil && e.SessionID == s.SessionID {
					restore()
					how := fmt.Sprintf("exit code %d", e.ExitCode)
					if e.Signal != "" {
						how = e.Signal
					}
					fmt.Fprintf(stderr, "[agentd: %s (%s) ended: %s]\n", s.SessionID, s.Name, how)
					if e.ExitCode < 0 {
						return ExitFailed
					}
					return e.ExitCode
				}
			}
		}
		select {
		case <-k.arrived:
		case <-winch:
			resize()
		case b, ok := <-keys:
			if !ok {
				restore()
				return ExitOK
			}
			cut := bytes.IndexByte(b, detach)
			if i := bytes.Index(b, kittyDetach); i >= 0 && (cut < 0 || i < cut) {
				cut = i
			}
			if cut >= 0 {
				b = b[:cut]
			}
			if len(b) > 0 {
				_ = k.Call(protocol.MethodInput, protocol.InputParams{SessionID: s.SessionID, Data: string(b)}, nil)
			}
			if cut >= 0 {
				_ = k.Call(protocol.MethodSubscribe, protocol.SubscribeParams{SessionID: s.SessionID, Output: false}, nil)
				restore()
				fmt.Fprintf(stderr, "[agentd: detached from %s (%s); it runs on: agentd attach %s]\n", s.SessionID, s.Name, s.SessionID)
				return ExitOK
			}
		case <-k.c.Done():
			// A handover closes every connection; the same daemon answers
			// again as new code, and the view is drawn again from its screen.
			// (Over ssh the link itself may have dropped: say so.)
			if k.host != "" {
				restore()
				fmt.Fprintf(stderr, "[agentd: the connection to host %s ended; the session runs on there: agentd attach %s:%s]\n", k.host, k.host, s.SessionID)
				return ExitUsage
			}
			if err := k.reconnect(); err == nil {
				fmt.Fprint(stdout, "\x1b[0m\x1b[H\x1b[2J")
				resize()
				if k.Call(protocol.MethodSubscribe, protocol.SubscribeParams{SessionID: s.SessionID, Output: true}, nil) == nil {
					continue
				}
			}
			restore()
			fmt.Fprintln(stderr, "[agentd: the daemon closed the connection]")
			return ExitUsage
		}
	}
}

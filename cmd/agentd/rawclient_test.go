package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// rawAgentd drives a real `agentd --stdio` byte for byte: the test writes
// whatever it likes to agentd's stdin (malformed frames included) and reads
// agentd's stdout with its own framing reader, which it can stop and
// resume (an editor that stops reading).
type rawAgentd struct {
	t       testing.TB
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *os.File // the read end of agentd's stdout
	logTo   string
	exited  chan struct{}
	waitErr error
	host    int // the daemon's pid, when a is a forwarder

	paused sync.Mutex // held while the editor does not read

	mu      sync.Mutex
	msgs    []rawMsg // everything agentd wrote, in order
	readErr error
	changed chan struct{}
	nextID  int
}

// rawMsg is one message agentd wrote.
type rawMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
	size   int
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

func (m rawMsg) isReply() bool { return m.Method == "" }

// startRaw starts agentd with stdin and stdout as pipes the test holds.
func startRaw(t testing.TB, extraArgs ...string) *rawAgentd {
	t.Helper()
	return startRawStderr(t, os.Stderr, extraArgs...)
}

// startRawStderr is startRaw with agentd's stderr going to stderr.
func startRawStderr(t testing.TB, stderr io.Writer, extraArgs ...string) *rawAgentd {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "agentd.log")
	return startRawCmd(t, stderr, append([]string{"--stdio", "--private", "--log", logPath}, extraArgs...), nil, logPath)
}

// startRawCmd starts agentd with args (and env, when not nil).
func startRawCmd(t testing.TB, stderr io.Writer, args, env []string, logPath string) *rawAgentd {
	t.Helper()
	cmd := exec.Command(agentdBinary(t), args...)
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = outW
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	a := &rawAgentd{t: t, cmd: cmd, in: in, out: outR, logTo: logPath, exited: make(chan struct{}), changed: make(chan struct{}, 1), nextID: 999}
	go func() { a.waitErr = cmd.Wait(); close(a.exited) }()
	go a.readLoop()
	t.Cleanup(func() {
		_ = a.in.Close()
		select {
		case <-a.exited:
		case <-time.After(15 * time.Second):
			_ = a.cmd.Process.Kill()
			t.Errorf("agentd did not exit within 15s of stdin closing")
		}
		a.out.Close()
	})
	return a
}

// pid is the process that owns the sessions: agentd itself in private
// mode, the daemon behind a forwarder (once host is set).
func (a *rawAgentd) pid() int {
	if a.host != 0 {
		return a.host
	}
	return a.cmd.Process.Pid
}

// readLoop reads framed messages from agentd's stdout with a framing
// reader of its own (not agentd's, not jsonrpc2's).
func (a *rawAgentd) readLoop() {
	r := bufio.NewReaderSize(a.out, 1<<16)
	fail := func(err error) {
		a.mu.Lock()
		a.readErr = err
		a.mu.Unlock()
		a.poke()
	}
	for {
		a.paused.Lock()
		a.paused.Unlock()
		n := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				fail(err)
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			name, value, ok := strings.Cut(line, ":")
			if !ok {
				fail(fmt.Errorf("agentd wrote a malformed header line %q", line))
				return
			}
			if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
				n, err = strconv.Atoi(strings.TrimSpace(value))
				if err != nil {
					fail(fmt.Errorf("agentd wrote a bad Content-Length %q", value))
					return
				}
			}
		}
		if n < 0 {
			fail(fmt.Errorf("agentd wrote a message without Content-Length"))
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			fail(err)
			return
		}
		var m rawMsg
		if err := json.Unmarshal(body, &m); err != nil {
			fail(fmt.Errorf("agentd wrote a body that is not JSON: %v: %.200q", err, body))
			return
		}
		m.size = n
		if m.Method == "session/output" && !strings.Contains(string(m.Params), `"dropped"`) {
			m.Params = nil // floods: keep the count, not the bytes
		}
		a.mu.Lock()
		a.msgs = append(a.msgs, m)
		a.mu.Unlock()
		a.poke()
	}
}

func (a *rawAgentd) poke() {
	select {
	case a.changed <- struct{}{}:
	default:
	}
}

// pause stops reading agentd's stdout (after the message being read, if
// one is); resume reads again.
func (a *rawAgentd) pause()  { a.paused.Lock() }
func (a *rawAgentd) resume() { a.paused.Unlock() }

// pipeBacklog is how many bytes agentd wrote to stdout that nobody read.
func (a *rawAgentd) pipeBacklog() int {
	n, err := unix.IoctlGetInt(int(a.out.Fd()), bytesToRead)
	if err != nil {
		a.t.Fatal(err)
	}
	return n
}

func (a *rawAgentd) write(raw string) {
	a.t.Helper()
	if _, err := io.WriteString(a.in, raw); err != nil {
		a.t.Fatalf("write to agentd: %v", err)
	}
}

func frameOf(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// request sends a request with a fresh id and returns the id.
func (a *rawAgentd) request(method string, params any) int {
	a.t.Helper()
	a.mu.Lock()
	a.nextID++
	id := a.nextID
	a.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, err := json.Marshal(msg)
	if err != nil {
		a.t.Fatal(err)
	}
	a.write(frameOf(string(b)))
	return id
}

// waitFor waits until match accepts a message at index >= *from, and
// advances *from past it.
func (a *rawAgentd) waitFor(what string, from *int, timeout time.Duration, match func(rawMsg) bool) rawMsg {
	a.t.Helper()
	deadline := time.After(timeout)
	for {
		a.mu.Lock()
		msgs, rerr := a.msgs, a.readErr
		a.mu.Unlock()
		for i := *from; i < len(msgs); i++ {
			if match(msgs[i]) {
				*from = i + 1
				return msgs[i]
			}
		}
		if rerr != nil {
			a.t.Fatalf("waiting for %s: agentd's stdout: %v", what, rerr)
		}
		select {
		case <-a.changed:
		case <-deadline:
			a.t.Fatalf("no %s within %s (agentd alive: %v)", what, timeout, a.alive())
		}
	}
}

// reply waits for the reply to request id (looking at every message).
func (a *rawAgentd) reply(id int) rawMsg {
	a.t.Helper()
	from := 0
	want := strconv.Itoa(id)
	return a.waitFor("reply to request "+want, &from, 60*time.Second, func(m rawMsg) bool {
		return m.isReply() && string(m.ID) == want
	})
}

// call sends a request and waits for its reply; result receives the
// result when there is no error.
func (a *rawAgentd) call(method string, params, result any) *rpcError {
	a.t.Helper()
	m := a.reply(a.request(method, params))
	if m.Error != nil {
		return m.Error
	}
	if result != nil {
		if err := json.Unmarshal(m.Result, result); err != nil {
			a.t.Fatalf("%s: result %s: %v", method, m.Result, err)
		}
	}
	return nil
}

func (a *rawAgentd) mustCall(method string, params, result any) {
	a.t.Helper()
	if err := a.call(method, params, result); err != nil {
		a.t.Fatalf("%s: %v", method, err)
	}
}

// waitState waits for a session/state notification for sessionID that
// match accepts, from message index *from on.
func (a *rawAgentd) waitState(sessionID string, from *int, timeout time.Duration, what string, match func(stateNote) bool) stateNote {
	a.t.Helper()
	var got stateNote
	a.waitFor(fmt.Sprintf("state %s of %s", what, sessionID), from, timeout, func(m rawMsg) bool {
		if m.Method != "session/state" {
			return false
		}
		var s stateNote
		if json.Unmarshal(m.Params, &s) != nil || s.SessionID != sessionID || !match(s) {
			return false
		}
		got = s
		return true
	})
	return got
}

// messages returns a copy of what agentd wrote so far.
func (a *rawAgentd) messages() []rawMsg {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]rawMsg(nil), a.msgs...)
}

func (a *rawAgentd) alive() bool {
	select {
	case <-a.exited:
		return false
	default:
		return true
	}
}

// rssKB is agentd's resident memory now, from /proc.
func rssKB(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("agentd's /proc status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// openFDCount is how many files pid holds open.
func openFDCount(t testing.TB, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// liveChildren lists pid's children that are not zombies, and its zombies.
func liveChildren(pid int) (live, zombies []int) {
	for _, c := range childrenOf(pid) {
		if alive(c) {
			live = append(live, c)
		} else if _, err := os.Stat(fmt.Sprintf("/proc/%d", c)); err == nil {
			zombies = append(zombies, c)
		}
	}
	return live, zombies
}

// cmdlineOf is a process's argv joined with spaces.
func cmdlineOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// waitGone waits until none of pids is alive.
func waitGone(t testing.TB, pids []int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				t.Errorf("pid %d (%s) still alive", p, cmdlineOf(p))
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

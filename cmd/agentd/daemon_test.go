package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/rpc/protocol"
)

// The editor's sidecar forwards to one daemon per user, and the daemon's
// sessions outlive every client: client A starts the demo agent and a
// turn, then A goes; the turn goes on to its permission prompt; client B,
// connected later, finds it blocked with its options and answers it; a
// client watching all along saw the same states as A while both were
// there. After the kill the daemon is back to its keeper and its baseline
// of open files.
func TestDaemonSessionsOutliveTheirClient(t *testing.T) {
	d := newDaemonEnv(t)
	a := d.forwarder()
	watcher := d.forwarder()
	daemon := a.init.Daemon.Pid
	if daemon == 0 || daemon == a.cmd.Process.Pid || a.init.Daemon.Private {
		t.Fatalf("initialize's daemon = %+v: want a daemon apart from the forwarder (pid %d)", a.init.Daemon, a.cmd.Process.Pid)
	}
	if watcher.init.Daemon.Pid != daemon || watcher.init.Daemon.Instance != a.init.Daemon.Instance {
		t.Fatalf("two forwarders reached two daemons: %+v and %+v", a.init.Daemon, watcher.init.Daemon)
	}
	keeperOnly(t, daemon)
	baseFDs := openFDCount(t, daemon)

	var s spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{agentdBinary(t), "demo-agent"}, "cwd": t.TempDir(), "cols": 100, "rows": 30}, &s)
	from := 0
	a.waitState(s.SessionID, "idle", &from, 20*time.Second)
	a.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "Add a NOTES.md file", "submit": true}, nil)
	a.waitState(s.SessionID, "working", &from, 20*time.Second)
	seenByA := a.stateSeq(s.SessionID)
	if code := a.close(); code != 0 {
		t.Errorf("the forwarder exited %d when its stdin closed, want 0", code)
	}
	if !alive(s.Pid) {
		t.Fatalf("the agent (pid %d) ended with the client that started it", s.Pid)
	}

	wfrom := 0
	wb := watcher.waitPrompt(s.SessionID, &wfrom, 20*time.Second)
	if got := watcher.stateSeq(s.SessionID); !slices.Equal(got[:len(seenByA)], seenByA) {
		t.Errorf("the watcher saw %v while A saw %v", got[:len(seenByA)], seenByA)
	}

	b := d.forwarder()
	var found bool
	for _, ls := range b.list().Sessions {
		if ls.SessionID != s.SessionID {
			continue
		}
		found = true
		if ls.State != "blocked" || ls.Prompt == nil || ls.Prompt.PromptID != wb.Prompt.PromptID || len(ls.Prompt.Options) != 3 {
			t.Fatalf("B lists %s as %s with prompt %+v; want blocked on %s with 3 options", ls.SessionID, ls.State, ls.Prompt, wb.Prompt.PromptID)
		}
		if ls.Origin == nil || ls.Origin.Client != "agentd-test" {
			t.Errorf("origin = %+v, want the client that spawned it", ls.Origin)
		}
	}
	if !found {
		t.Fatalf("B does not list %s", s.SessionID)
	}
	var res struct{ State string }
	b.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": wb.Prompt.PromptID, "optionId": "1"}, &res)
	bfrom := 0
	if done := b.waitState(s.SessionID, "done", &bfrom, 20*time.Second); done.Outcome != "completed" {
		t.Errorf("done outcome %q", done.Outcome)
	}
	watcher.waitState(s.SessionID, "done", &wfrom, 20*time.Second)

	b.mustCall("session/kill", map[string]any{"sessionId": s.SessionID}, nil)
	b.waitState(s.SessionID, "exited", &bfrom, 20*time.Second)
	watcher.waitState(s.SessionID, "exited", &wfrom, 20*time.Second)
	keeperOnly(t, daemon)
	// Two clients then (A and the watcher), two now (B and the watcher).
	if fds := openFDCount(t, daemon); fds != baseFDs {
		t.Errorf("the daemon holds %d files open, %d before the session", fds, baseFDs)
	}
	t.Logf("A saw %v; the watcher %v", seenByA, watcher.stateSeq(s.SessionID))
}

// Two clients answering one prompt at the same moment: one answer is
// written, the other client is told it was already answered or is stale.
func TestDaemonRacingAnswersFromTwoClients(t *testing.T) {
	d := newDaemonEnv(t)
	a, b := d.forwarder(), d.forwarder()
	// Everything typed in the second after the answer is shown, quoted.
	script := `read -r -n 1 -p "Proceed? [y/n] " a; IFS= read -r -t 1 -d '' rest; printf '\nanswers:%s extra:%q\n' "$a" "$rest"; sleep 30`
	var s spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", script}, "cwd": t.TempDir()}, &s)
	from, bfrom := 0, 0
	pa := a.waitState(s.SessionID, "blocked", &from, 10*time.Second)
	pb := b.waitState(s.SessionID, "blocked", &bfrom, 10*time.Second)
	if pa.Prompt.PromptID != pb.Prompt.PromptID {
		t.Fatalf("the clients were told different prompts: %s and %s", pa.Prompt.PromptID, pb.Prompt.PromptID)
	}
	if !pa.Attention || !pb.Attention {
		t.Errorf("attention is per client: A %v, B %v; want both true", pa.Attention, pb.Attention)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, c := range []*stdioClient{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.call("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": pa.Prompt.PromptID, "optionId": "1"}, nil)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if code := rpcCode(err); code != -32021 && code != -32025 {
			t.Fatalf("losing answer: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d answers succeeded (%v), want exactly 1", ok, errs)
	}
	screen := waitScreen(t, a, s.SessionID, "extra:", 10*time.Second)
	if !strings.Contains(screen, "answers:y extra:$'\\n'") {
		t.Fatalf("want one answer and nothing extra typed:\n%s", screen)
	}
}

// waitScreen polls session/read until the screen holds want.
func waitScreen(t *testing.T, c *stdioClient, id, want string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var read struct{ Rows []string }
	for {
		c.mustCall("session/read", map[string]any{"sessionId": id}, &read)
		screen := strings.Join(read.Rows, "\n")
		if strings.Contains(screen, want) || time.Now().After(deadline) {
			return screen
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Forwarders started together, with no daemon running, start exactly one
// and all reach it.
func TestTwoForwardersStartOneDaemon(t *testing.T) {
	d := newDaemonEnv(t)
	const n = 4
	clients := make([]*stdioClient, n)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() { defer wg.Done(); clients[i] = d.forwarder() }()
	}
	wg.Wait()
	pid := clients[0].init.Daemon.Pid
	for i, c := range clients {
		if c.init.Daemon.Pid == 0 || c.init.Daemon.Pid != pid {
			t.Errorf("forwarder %d reached daemon %d, forwarder 0 reached %d", i, c.init.Daemon.Pid, pid)
		}
	}
	if got := daemonsOn(d.socket); len(got) != 1 {
		t.Errorf("daemons serving %s: %v, want exactly one", d.socket, got)
	}
	// A second daemon started by hand refuses, naming the first.
	_, stderr, code := d.cli("serve")
	if code == 0 || !strings.Contains(stderr, fmt.Sprintf("already serving %s (pid %d)", d.socket, pid)) {
		t.Errorf("a second agentd serve: exit %d, %q", code, stderr)
	}
}

// daemonsOn lists the pids of `agentd serve` processes for socket.
func daemonsOn(socket string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if cl := cmdlineOf(pid); strings.Contains(cl, " serve ") && strings.Contains(cl, socket) && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// A session runs with the environment of the client that spawned it, not
// the daemon's, and spawn's env adds to it; a spawn without cwd runs in
// the client's folder.
func TestDaemonSpawnsInTheClientsEnvironment(t *testing.T) {
	d := newDaemonEnv(t)
	d.forwarder() // starts the daemon, whose environment lacks AGENTD_TEST_VAR
	env := append(append([]string(nil), d.env...), "AGENTD_TEST_VAR=from-the-client")
	dir := t.TempDir()
	c := startClientIn(t, dir, []string{"--stdio", "--log", d.log}, env)
	script := `printf 'var=%s extra=%s pwd=%s\n' "$AGENTD_TEST_VAR" "$EXTRA" "$PWD"; sleep 30`
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", script}, "env": map[string]string{"EXTRA": "added"}}, &s)
	screen := waitScreen(t, c, s.SessionID, "pwd=", 10*time.Second)
	if !strings.Contains(screen, "var=from-the-client extra=added pwd="+dir) {
		t.Fatalf("the session does not run in its client's environment and folder (%s):\n%s", dir, screen)
	}
}

// An agentd killed with SIGKILL takes no agent with it silently: its keeper
// ends every session's process group, and every forwarder exits with an
// error, so each editor learns that its sessions ended.
func TestDaemonKilledEndsItsAgents(t *testing.T) {
	d := newDaemonEnv(t)
	a, b := d.forwarder(), d.forwarder()
	var pids []int
	for _, argv := range [][]string{{"sleep", "300"}, {"bash", "--norc", "-c", "trap '' HUP; sleep 300 & sleep 300"}} {
		var s spawned
		a.mustCall("session/spawn", map[string]any{"argv": argv, "cwd": t.TempDir()}, &s)
		pids = append(pids, s.Pid)
	}
	all := withChildren(t, pids, 4)
	daemon := a.init.Daemon.Pid
	if err := syscall.Kill(daemon, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, all, 10*time.Second)
	for _, c := range []*stdioClient{a, b} {
		done := make(chan struct{})
		go func() { _ = c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("a forwarder is still running 10 s after its daemon was killed")
		}
		if code := c.cmd.ProcessState.ExitCode(); code != 1 {
			t.Errorf("the forwarder exited %d when its daemon was killed, want 1", code)
		}
		c.closeOnce.Do(func() {}) // already reaped
	}
}

// With no client and no session the daemon ends after its idle timeout; a
// session keeps it, whether or not a client is connected.
func TestDaemonIdleTimeout(t *testing.T) {
	d := newDaemonEnv(t)
	a := d.forwarder("--idle-timeout", "300ms")
	daemon := a.init.Daemon.Pid
	var s spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{"sleep", "300"}, "cwd": t.TempDir()}, &s)
	a.close()
	// A session runs: the daemon must still be there well past the timeout.
	// (Checked through a client, which itself resets the timer; the session
	// must be listed and running.)
	time.Sleep(time.Second)
	if !alive(daemon) {
		t.Fatalf("the daemon ended while a session ran")
	}
	out, _, code := d.cli("kill", s.SessionID)
	if code != 0 {
		t.Fatalf("agentd kill: %d %s", code, out)
	}
	waitGone(t, []int{daemon}, 10*time.Second)
}

// A client that says it only watches in the background (another
// machine's agentd following this one's sessions for its desktop notices)
// does not keep an idle daemon running; its connection ends with it.
func TestBackgroundClientLetsTheDaemonIdle(t *testing.T) {
	d := newDaemonEnv(t)
	a := d.forwarder("--idle-timeout", "300ms")
	daemon := a.init.Daemon.Pid
	a.mustCall("initialize", map[string]any{"clientInfo": map[string]any{"name": "agentd-desktop", "background": true}}, nil)
	waitGone(t, []int{daemon}, 20*time.Second)
	waitLogLine(t, d.log, `msg="daemon ending" why="idle for 300ms with no client (but background ones) and no session"`, 10*time.Second)
}

// A daemon of another build that speaks the same protocol works, and
// initialize says so; one that speaks another protocol is refused with an
// error that says how to restart it. (The other-protocol daemon is a stand-in
// listening on the socket, answering hello as a future agentd would: no
// build of another protocol exists to run.)
func TestForwarderChecksTheDaemonsVersion(t *testing.T) {
	other := filepath.Join(t.TempDir(), "agentd")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=9.9.9-other", "-o", other, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	d := newDaemonEnv(t)
	start := exec.Command(other, "serve", "--socket", d.socket, "--log", d.log)
	start.Env = d.env
	if err := start.Start(); err != nil {
		t.Fatal(err)
	}
	waitSocket(t, d.socket)
	c := d.forwarder()
	if c.init.Daemon.Version != "9.9.9-other" || len(c.init.Warnings) != 1 || !strings.Contains(c.init.Warnings[0], "the daemon is the newer") {
		t.Errorf("initialize from a daemon of another build: daemon %+v, warnings %q", c.init.Daemon, c.init.Warnings)
	}
	c.close()
	d.stop()
	_ = start.Wait()

	// The stand-in: a socket answering hello with protocol 99.
	ln, err := net.Listen("unix", d.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go standInDaemon(ln, 99)
	resp := forwardOnce(t, d.env, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if resp.Error == nil || resp.Error.Code != -32041 || !strings.Contains(resp.Error.Message, "speaks protocol 99") || !strings.Contains(resp.Error.Message, "agentd stop") {
		t.Errorf("initialize through a forwarder to a protocol-99 daemon: %+v", resp.Error)
	}
}

// standInDaemon answers each connection's hello as a daemon speaking
// protocol version speaks, then hangs up.
func standInDaemon(ln net.Listener, speaks int) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer nc.Close()
			body, err := protocol.ReadMessage(bufio.NewReader(nc))
			if err != nil {
				return
			}
			var req struct{ ID json.RawMessage }
			_ = json.Unmarshal(body, &req)
			reply, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{
				"version": "99.0.0", "protocolVersion": speaks, "pid": os.Getpid(), "instance": "stand-in", "startedAt": ""}})
			_ = protocol.WriteMessage(nc, reply)
			_, _ = io.Copy(io.Discard, nc)
		}()
	}
}

// rawReply is a JSON-RPC reply as a test reads it.
type rawReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// forwardOnce starts a forwarder, writes one framed message to it and
// reads the first framed message it writes back.
func forwardOnce(t *testing.T, env []string, body string, extra ...string) rawReply {
	t.Helper()
	cmd := exec.Command(agentdBinary(t), append([]string{"--stdio"}, extra...)...)
	cmd.Env = env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(body), body)
	got := make(chan rawReply, 1)
	go func() {
		var r rawReply
		if b, err := protocol.ReadMessage(bufio.NewReader(out)); err == nil {
			_ = json.Unmarshal(b, &r)
		}
		got <- r
	}()
	select {
	case r := <-got:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the forwarder wrote nothing in 20 s")
	}
	return rawReply{}
}

func waitSocket(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s after 10 s", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An exited session stays listed, with its last screen, for --keep-exited,
// so a window opened after the end sees how it ended; then it is gone.
func TestDaemonKeepsExitedSessionsAWhile(t *testing.T) {
	d := newDaemonEnv(t)
	a := d.forwarder("--keep-exited", "2s")
	var s spawned
	a.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", "echo last words; exit 3"}, "cwd": t.TempDir()}, &s)
	from := 0
	a.waitState(s.SessionID, "exited", &from, 10*time.Second)
	a.close()

	b := d.forwarder()
	var found bool
	for _, ls := range b.list().Sessions {
		if ls.SessionID == s.SessionID {
			found = true
			if ls.State != "exited" || ls.Exit == nil || ls.Exit.ExitCode != 3 {
				t.Errorf("a later client lists %s as %s, exit %+v; want exited with code 3", s.SessionID, ls.State, ls.Exit)
			}
		}
	}
	if !found {
		t.Fatalf("a later client does not list the exited session")
	}
	if screen := waitScreen(t, b, s.SessionID, "last words", 5*time.Second); !strings.Contains(screen, "last words") {
		t.Errorf("the exited session's last screen is gone:\n%s", screen)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		listed := false
		for _, ls := range b.list().Sessions {
			listed = listed || ls.SessionID == s.SessionID
		}
		if !listed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exited session is still listed 20 s after it ended (--keep-exited 2s)")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := b.call("session/read", map[string]any{"sessionId": s.SessionID}, nil); rpcCode(err) != -32010 {
		t.Errorf("session/read of a forgotten session: %v, want -32010", err)
	}
}

// agentd stop returns once the daemon is gone, so a client started right
// after it gets a new daemon, never a refusal from the old one's lock.
func TestStopThenStartAtOnce(t *testing.T) {
	d := newDaemonEnv(t)
	prev := 0
	for i := range 5 {
		c := d.forwarder()
		if c.init.Daemon.Pid == 0 || c.init.Daemon.Pid == prev {
			t.Fatalf("round %d: initialize's daemon %+v, the previous one was %d", i, c.init.Daemon, prev)
		}
		prev = c.init.Daemon.Pid
		var s spawned
		c.mustCall("session/spawn", map[string]any{"argv": []string{"bash", "--norc", "-c", "trap '' HUP; sleep 300"}, "cwd": t.TempDir()}, &s)
		c.close()
		if out, errOut, code := d.cli("stop", "--force"); code != 0 {
			t.Fatalf("round %d: agentd stop --force: exit %d: %s%s", i, code, out, errOut)
		}
		// stop returns once the daemon's lock is free, which the kernel
		// does as the process ends; the process itself may take a moment
		// more to be gone (seen under make test-under-load). The next round's
		// forwarder checks what matters: it gets a new daemon at once.
		for deadline := time.Now().Add(10 * time.Second); alive(prev); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: agentd stop returned and the daemon (pid %d) still runs 10 s later", i, prev)
			}
		}
	}
}

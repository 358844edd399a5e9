package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// desktopLab is a person's desktop for one test: an X server (Xvfb), a
// private D-Bus session bus and a real notification server on it (dunst),
// whose context menu is a script that picks the "Yes" line and keeps the
// menu it was shown.
type desktopLab struct {
	t       *testing.T
	dir     string
	display string
	bus     string
	menu    string // what dunst's context menu listed, last time
}

func newDesktopLab(t *testing.T) *desktopLab {
	t.Helper()
	for _, tool := range []string{"Xvfb", "dbus-daemon", "dunst", "dunstctl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("AGENTD_REQUIRE_AGENTS") != "" {
				t.Fatalf("%s is not installed (.ci/run installs xvfb, dbus, dunst)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	x := &desktopLab{t: t, dir: t.TempDir()}
	x.menu = filepath.Join(x.dir, "menu.txt")

	// Xvfb picks a free display and writes its number on fd 3.
	r, w, err := os.Pipe()
	must(t, err)
	xvfb := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1024x600x24", "-nolisten", "tcp")
	xvfb.ExtraFiles = []*os.File{w}
	must(t, xvfb.Start())
	w.Close()
	t.Cleanup(func() { _ = xvfb.Process.Kill(); _ = xvfb.Wait() })
	x.display = ":" + readLine(t, r, "Xvfb's display number")
	r.Close()

	x.bus = startSessionBus(t, x.dir)

	pick := filepath.Join(x.dir, "pick.sh")
	must(t, os.WriteFile(pick, []byte("#!/bin/sh\ntee "+x.menu+" | grep -m1 '^#Yes ('\n"), 0o755))
	rc := filepath.Join(x.dir, "dunstrc")
	must(t, os.WriteFile(rc, []byte("[global]\ndmenu = "+pick+"\nfont = DejaVu Sans 11\nwidth = 520\noffset = 20x20\n"), 0o644))
	dunst := exec.Command("dunst", "-config", rc)
	dunst.Env = x.env(os.Environ())
	dunstLog, err := os.Create(filepath.Join(x.dir, "dunst.log"))
	must(t, err)
	dunst.Stdout, dunst.Stderr = dunstLog, dunstLog
	must(t, dunst.Start())
	t.Cleanup(func() { _ = dunst.Process.Kill(); _ = dunst.Wait(); dunstLog.Close() })
	// dunst serves once dunstctl reaches it over the bus.
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := x.dunstctl("count", "displayed")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(x.dir, "dunst.log"))
			t.Fatalf("dunst did not serve within 20 s: dunstctl: %v %s\ndunst's log:\n%s", err, out, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return x
}

// startSessionBus runs a private D-Bus session bus in dir and returns its
// address.
func startSessionBus(t *testing.T, dir string) string {
	t.Helper()
	r, w, err := os.Pipe()
	must(t, err)
	bus := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=3", "--address=unix:path="+filepath.Join(dir, "bus"))
	bus.ExtraFiles = []*os.File{w}
	must(t, bus.Start())
	w.Close()
	t.Cleanup(func() { _ = bus.Process.Kill(); _ = bus.Wait() })
	defer r.Close()
	return readLine(t, r, "dbus-daemon's address")
}

func readLine(t *testing.T, r *os.File, what string) string {
	t.Helper()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case s := <-line:
		if s == "" {
			t.Fatalf("no %s", what)
		}
		return s
	case <-time.After(20 * time.Second):
		t.Fatalf("no %s within 20 s", what)
	}
	return ""
}

// env is base with this desktop's display and bus.
func (x *desktopLab) env(base []string) []string {
	var out []string
	for _, kv := range base {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") {
			out = append(out, kv)
		}
	}
	return append(out, "DISPLAY="+x.display, "DBUS_SESSION_BUS_ADDRESS="+x.bus)
}

func (x *desktopLab) dunstctl(args ...string) (string, error) {
	cmd := exec.Command("dunstctl", args...)
	cmd.Env = x.env(os.Environ())
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// waitDisplayed waits until dunst shows n notices.
func (x *desktopLab) waitDisplayed(n int, why string) {
	x.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := x.dunstctl("count", "displayed")
		got, _ := strconv.Atoi(out)
		if err == nil && got == n {
			return
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("%s: dunst did not show %d notice(s) within 20 s: it shows %q (%v)", why, n, out, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// screenshot saves the X screen as a PNG when AGENTD_DESKTOP_SCREENSHOT
// names a file (ImageMagick's import; a look for a person, not a check).
func (x *desktopLab) screenshot() {
	path := os.Getenv("AGENTD_DESKTOP_SCREENSHOT")
	if path == "" {
		return
	}
	cmd := exec.Command("import", "-window", "root", path)
	cmd.Env = x.env(os.Environ())
	if out, err := cmd.CombinedOutput(); err != nil {
		x.t.Logf("screenshot: %v: %s", err, out)
	} else {
		x.t.Logf("screenshot: %s", path)
	}
}

// The whole way of a desktop notice, on a real session bus with a real
// notification server: with no client focused, the demo agent's
// permission prompt raises a notice with its options as buttons; the
// "Yes" button (dunst's context menu) answers the prompt through agentd's
// guard and the demo goes on to finish; a notice whose session is answered
// from an editor, or seen, is taken down; a focused client keeps notices
// away.
func TestDesktopNoticesThroughDunst(t *testing.T) {
	x := newDesktopLab(t)
	d := newDaemonEnv(t)
	d.env = x.env(d.env)
	c := d.forwarder()
	spawnDemo := func(name string) (spawned, int) {
		var s spawned
		c.mustCall("session/spawn", map[string]any{"argv": []string{agentdBinary(t), "demo-agent"}, "cwd": t.TempDir(), "name": name, "cols": 80, "rows": 24}, &s)
		from := 0
		c.waitState(s.SessionID, "idle", &from, 20*time.Second)
		c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "Add a NOTES.md file", "submit": true}, nil)
		return s, from
	}
	shown := func(id, state string) {
		t.Helper()
		waitLogLine(t, d.log, fmt.Sprintf(`msg="desktop notice shown" session=%s state=%s`, id, state), 30*time.Second)
	}

	// 1. No client focused: the prompt raises a notice with buttons, and
	// its "Yes" answers the prompt.
	s1, from := spawnDemo("notes")
	b := c.waitPrompt(s1.SessionID, &from, 30*time.Second)
	shown(s1.SessionID, "blocked")
	x.waitDisplayed(1, "the blocked demo's notice")
	if l := logLines(d.log, `msg="desktop notice shown"`, "session="+s1.SessionID, "buttons=3"); len(l) == 0 {
		t.Errorf("the notice did not carry the prompt's 3 options as buttons: %q", logLines(d.log, "desktop notice"))
	}
	x.screenshot()
	if out, err := x.dunstctl("context"); err != nil {
		t.Fatalf("dunstctl context: %v: %s", err, out)
	}
	c.waitState(s1.SessionID, "working", &from, 20*time.Second)
	c.waitState(s1.SessionID, "done", &from, 30*time.Second)
	waitLogLine(t, d.log, fmt.Sprintf(`msg="desktop: answered from the notice" session=%s promptId=%s option=1`, s1.SessionID, b.Prompt.PromptID), 10*time.Second)
	// dunst's menu was the notice's buttons (the script kept it).
	menu, _ := os.ReadFile(x.menu)
	for _, want := range []string{"#Yes (notes needs you", "#No, and tell the agent what to do differently ("} {
		if !strings.Contains(string(menu), want) {
			t.Errorf("dunst's menu lacks %q:\n%s", want, menu)
		}
	}
	if screen := c.screen(s1.SessionID); !strings.Contains(screen, "Added NOTES.md.") {
		t.Errorf("the demo did not go on after the notice's Yes:\n%s", screen)
	}
	// Its turn's end is a notice too; looking at the session takes it down.
	shown(s1.SessionID, "done")
	x.waitDisplayed(1, "the finished demo's notice")
	c.mustCall("session/seen", map[string]any{"sessionId": s1.SessionID}, nil)
	waitLogLine(t, d.log, `msg="desktop notice closed" session=`+s1.SessionID, 20*time.Second)
	x.waitDisplayed(0, "after session/seen")

	// 2. A prompt answered from an editor takes its notice down.
	s2, from := spawnDemo("answered")
	b = c.waitPrompt(s2.SessionID, &from, 30*time.Second)
	shown(s2.SessionID, "blocked")
	x.waitDisplayed(1, "the second demo's notice")
	c.mustCall("runtime_answer", map[string]any{"sessionId": s2.SessionID, "promptId": b.Prompt.PromptID, "optionId": "1"}, nil)
	waitLogLine(t, d.log, `msg="desktop notice closed" session=`+s2.SessionID, 20*time.Second)
	c.waitState(s2.SessionID, "done", &from, 30*time.Second)
	shown(s2.SessionID, "done")
	c.mustCall("session/seen", map[string]any{"sessionId": s2.SessionID}, nil)
	x.waitDisplayed(0, "after the editor answered and looked")

	// 3. A focused client: no notice, and the log says why.
	c.mustCall("client/focus", map[string]any{"focused": true}, nil)
	s3, from := spawnDemo("focused")
	c.waitPrompt(s3.SessionID, &from, 30*time.Second)
	waitLogLine(t, d.log, fmt.Sprintf(`msg="desktop notice suppressed: focused client" session=%s state=blocked`, s3.SessionID), 20*time.Second)
	if l := logLines(d.log, `msg="desktop notice shown"`, "session="+s3.SessionID+" "); len(l) > 0 {
		t.Errorf("a notice for %s while a client was focused: %q", s3.SessionID, l)
	}
	if out, _ := x.dunstctl("count", "displayed"); out != "0" {
		t.Errorf("dunst shows %s notice(s) while a client is focused", out)
	}
}

// Without a session bus, agentd says so once and works on: a session
// blocks and is answered as ever.
func TestDesktopNoticesWithoutBus(t *testing.T) {
	d := newDaemonEnv(t)
	var env []string
	for _, kv := range d.env {
		if !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") {
			env = append(env, kv)
		}
	}
	d.env = append(env, "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	c := d.forwarder()
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{agentdBinary(t), "demo-agent"}, "cwd": t.TempDir(), "cols": 80, "rows": 24}, &s)
	from := 0
	c.waitState(s.SessionID, "idle", &from, 20*time.Second)
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "Add a NOTES.md file", "submit": true}, nil)
	b := c.waitPrompt(s.SessionID, &from, 30*time.Second)
	waitLogLine(t, d.log, `msg="desktop notices off" err="no D-Bus session bus`, 20*time.Second)
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": "1"}, nil)
	c.waitState(s.SessionID, "done", &from, 30*time.Second)
	if n := len(logLines(d.log, "desktop notices off")); n != 1 {
		t.Errorf("%d log lines say desktop notices are off, want 1", n)
	}
}

// hungServer is a notification server on a real bus that takes every
// Notify and never answers it: a server that has hung.
type hungServer struct {
	got     chan string // each Notify's summary
	release chan struct{}
}

func (h *hungServer) GetCapabilities() ([]string, *dbus.Error) {
	return []string{"actions", "body"}, nil
}

func (h *hungServer) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	h.got <- summary
	<-h.release
	return 1, nil
}

func (h *hungServer) CloseNotification(id uint32) *dbus.Error { return nil }

// A notification server that takes a Notify and never answers holds up
// nothing: the blocked session is answered and finishes its turn while
// agentd's call waits, and agentd gives the call up and says so.
func TestDesktopHungNotificationServer(t *testing.T) {
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		if os.Getenv("AGENTD_REQUIRE_AGENTS") != "" {
			t.Fatal("dbus-daemon is not installed (.ci/run installs dbus)")
		}
		t.Skip("dbus-daemon is not installed")
	}
	addr := startSessionBus(t, t.TempDir())
	conn, err := dbus.Connect(addr)
	must(t, err)
	defer conn.Close()
	h := &hungServer{got: make(chan string, 10), release: make(chan struct{})}
	defer close(h.release)
	must(t, conn.Export(h, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"))
	if reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning org.freedesktop.Notifications: %v %v", reply, err)
	}

	d := newDaemonEnv(t)
	var env []string
	for _, kv := range d.env {
		if !strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") {
			env = append(env, kv)
		}
	}
	d.env = append(env, "DBUS_SESSION_BUS_ADDRESS="+addr)
	c := d.forwarder()
	var s spawned
	c.mustCall("session/spawn", map[string]any{"argv": []string{agentdBinary(t), "demo-agent"}, "cwd": t.TempDir(), "name": "hung", "cols": 80, "rows": 24}, &s)
	from := 0
	c.waitState(s.SessionID, "idle", &from, 20*time.Second)
	c.mustCall("runtime_send", map[string]any{"sessionId": s.SessionID, "text": "Add a NOTES.md file", "submit": true}, nil)
	b := c.waitPrompt(s.SessionID, &from, 30*time.Second)
	select {
	case summary := <-h.got:
		if !strings.Contains(summary, "hung needs you") {
			t.Errorf("the notice's summary: %q", summary)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("agentd sent no Notify within 20 s of blocked")
	}
	// The server holds that call; the session goes on all the same.
	c.mustCall("runtime_answer", map[string]any{"sessionId": s.SessionID, "promptId": b.Prompt.PromptID, "optionId": "1"}, nil)
	c.waitState(s.SessionID, "done", &from, 30*time.Second)
	waitLogLine(t, d.log, fmt.Sprintf(`msg="desktop: a notice failed" session=%s state=blocked err="context deadline exceeded"`, s.SessionID), 30*time.Second)
}

package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Another machine's prompt raises a desktop notice on this one, naming
// its host, with the prompt's options as buttons (a real dunst on a
// private bus; hosts a and b are real OpenSSH servers on loopback, each
// with a daemon running a demo named "demo"). The notice's "Yes" answers
// on a, bound to the prompt it showed; b's demo, of the same name, is not
// touched. A focused client here keeps a's notices away as it keeps this
// machine's. a going down is logged, and once it is back its next prompt
// raises a notice again.
func TestDesktopNoticesForOtherHosts(t *testing.T) {
	x := newDesktopLab(t)
	d, a, _ := twoHosts(t)
	d.env = x.env(d.env)
	aID, bID := d.runDemo("a"), d.runDemo("b")
	// A cooldown of 1 s: a's prompts come quicker than the 30 s one lets
	// a notice be raised again for the same session.
	c := d.forwarder("--cooldown", "1s") // this machine's daemon, on the desktop
	waitLogLine(t, d.log, `msg="desktop: following a host's sessions" host=a`, 30*time.Second)
	key := "a:" + aID

	// 1. a's demo asks: a notice here names a, and its Yes answers there.
	d.demoAsks("a")
	prompt := d.demoPrompt("a")
	waitLogLine(t, d.log, fmt.Sprintf(`msg="desktop notice shown" session=%s state=blocked`, key), 60*time.Second)
	x.waitDisplayed(1, "a's blocked demo's notice")
	if l := logLines(d.log, `msg="desktop notice shown"`, "session="+key+" ", "buttons=3"); len(l) == 0 {
		t.Errorf("a's notice did not carry the prompt's 3 options as buttons: %q", logLines(d.log, "desktop"))
	}
	x.screenshot()
	if out, err := x.dunstctl("context"); err != nil {
		t.Fatalf("dunstctl context: %v: %s", err, out)
	}
	waitLogLine(t, d.log, fmt.Sprintf(`msg="desktop: answered from the notice" session=%s promptId=%s option=1`, key, prompt), 60*time.Second)
	if out, errOut, code := d.cli("wait", "a:demo", "--until", "done", "--timeout", "60s"); code != 0 {
		t.Fatalf("a:demo after the notice's Yes: exit %d\n%s%s; want its turn done", code, out, errOut)
	}
	menu, _ := os.ReadFile(x.menu)
	if !strings.Contains(string(menu), "#Yes (demo on a needs you") {
		t.Errorf("dunst's menu does not name host a:\n%s", menu)
	}
	out, errOut, code := d.cli("ls", "-H", "b", "--json")
	if code != 0 || !strings.Contains(out, `"sessionId":"`+bID+`"`) || !strings.Contains(out, `"state":"idle"`) {
		t.Fatalf("b after a's notice was answered: exit %d\n%s%s; want b's demo %s idle, untouched", code, out, errOut, bID)
	}
	// Its turn's end is a notice too, named the same way.
	waitLogLine(t, d.log, fmt.Sprintf(`msg="desktop notice shown" session=%s state=done`, key), 60*time.Second)

	// 2. A focused client here: a's next prompt raises no notice.
	c.mustCall("client/focus", map[string]any{"focused": true}, nil)
	askAgain := func() {
		t.Helper()
		if out, errOut, code := d.cli("send", "a:demo", "Add a NOTES.md file"); code != 0 {
			t.Fatalf("agentd send a:demo: exit %d\n%s%s", code, out, errOut)
		}
	}
	askAgain()
	second := d.demoPrompt("a")
	waitLogLine(t, d.log, fmt.Sprintf(`msg="desktop notice suppressed: focused client" session=%s state=blocked`, key), 60*time.Second)
	if out, errOut, code := d.cli("answer", "a:demo", "1", "--prompt", second); code != 0 {
		t.Fatalf("agentd answer a:demo 1: exit %d\n%s%s", code, out, errOut)
	}
	c.mustCall("client/focus", map[string]any{"focused": false}, nil)

	// 3. a goes away and comes back: said in the log, and its next prompt
	// is a notice again.
	if out, errOut, code := d.cli("wait", "a:demo", "--until", "done", "--timeout", "60s"); code != 0 {
		t.Fatalf("a:demo after its second answer: exit %d\n%s%s", code, out, errOut)
	}
	a.Down()
	waitLogLine(t, d.log, `msg="desktop: a host is unreachable" host=a`, 90*time.Second)
	a.Up()
	waitLogLine(t, d.log, `msg="desktop: a host is reachable again" host=a`, 120*time.Second)
	before := len(logLines(d.log, `msg="desktop notice shown"`, "session="+key+" ", "state=blocked"))
	askAgain()
	third := d.demoPrompt("a")
	deadline := time.Now().Add(60 * time.Second)
	for len(logLines(d.log, `msg="desktop notice shown"`, "session="+key+" ", "state=blocked")) == before {
		if time.Now().After(deadline) {
			t.Fatalf("a's prompt %s after a came back raised no notice within 60 s; the daemon's desktop lines:\n%s", third, strings.Join(logLines(d.log, "desktop"), "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

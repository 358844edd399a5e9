//go:build unix

package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/cmd/agentd/internal/cli"
	"github.com/agentd/agentd/rpc/hosts/hoststest"
)

// hostsReport is `agentd ls --all --json` and `agentd hosts --json`.
type hostsReport struct {
	Hosts []struct {
		Name     string `json:"name"`
		State    string `json:"state"`
		Error    string `json:"error"`
		Version  string `json:"version"`
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Name      string `json:"name"`
			State     string `json:"state"`
			Prompt    *struct {
				PromptID string `json:"promptId"`
				Subject  *struct {
					Text string `json:"text"`
				} `json:"subject"`
			} `json:"prompt"`
		} `json:"sessions"`
	} `json:"hosts"`
}

func (d *daemonEnv) hostsReport(args ...string) hostsReport {
	d.t.Helper()
	out, errOut, code := d.cli(args...)
	var r hostsReport
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		d.t.Fatalf("agentd %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return r
}

// twoHosts is a daemon environment for this machine whose config.toml
// names hosts a and b, real OpenSSH servers on loopback (hoststest).
func twoHosts(t *testing.T) (d *daemonEnv, a, b *hoststest.Host) {
	t.Helper()
	keys := hoststest.NewKeys(t)
	a, b = hoststest.Start(t, keys, "a", agentdBinary(t)), hoststest.Start(t, keys, "b", agentdBinary(t))
	d = newDaemonEnv(t)
	configHome := t.TempDir()
	hoststest.WriteConfig(t, configHome, a, b)
	d.env = append(d.env, "XDG_CONFIG_HOME="+configHome)
	return d, a, b
}

// runDemo starts the demo agent, named demo, on host ("" or "local": this
// machine) with agentd run, and returns its session id.
func (d *daemonEnv) runDemo(host string) string {
	d.t.Helper()
	args := []string{"run", "--name", "demo", "--", agentdBinary(d.t), "demo-agent"}
	if host != "" && host != "local" {
		args = append([]string{"run", "-H", host}, args[1:]...)
	}
	out, errOut, code := d.cli(args...)
	if code != 0 {
		d.t.Fatalf("agentd %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return strings.TrimSpace(out)
}

// demoAsks gives host's demo its task once it is idle; demoPrompt waits
// for the permission it then asks and returns its promptId.
func (d *daemonEnv) demoAsks(host string) {
	d.t.Helper()
	if out, errOut, code := d.cli("wait", host+":demo", "--until", "idle", "--timeout", "60s"); code != 0 {
		d.t.Fatalf("agentd wait %s:demo --until idle: exit %d\n%s%s", host, code, out, errOut)
	}
	if out, errOut, code := d.cli("send", host+":demo", "Add a NOTES.md file"); code != 0 {
		d.t.Fatalf("agentd send %s:demo: exit %d\n%s%s", host, code, out, errOut)
	}
}

func (d *daemonEnv) demoPrompt(host string) string {
	d.t.Helper()
	out, errOut, code := d.cli("wait", "-H", host, "demo", "--until", "blocked", "--timeout", "60s", "--json")
	var w struct {
		Prompt struct {
			PromptID string `json:"promptId"`
		} `json:"prompt"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &w) != nil || w.Prompt.PromptID == "" {
		d.t.Fatalf("agentd wait -H %s demo --until blocked: exit %d\n%s%s", host, code, out, errOut)
	}
	return w.Prompt.PromptID
}

// Sessions on this machine and two others, in one view: agentd ls --all
// lists them with their hosts; a session is named HOST:NAME, and an answer
// reaches the host and the prompt it names and no other, where all three
// sessions have the same name. A host that goes away is shown unreachable,
// holds up no other, and when it comes back its sessions are there as
// they were.
func TestHostsOverSSH(t *testing.T) {
	d, _, b := twoHosts(t)

	// Nothing runs anywhere yet: every host answers, none has a daemon.
	r := d.hostsReport("hosts", "--json")
	if len(r.Hosts) != 3 || r.Hosts[0].Name != "local" || r.Hosts[1].Name != "a" || r.Hosts[2].Name != "b" {
		t.Fatalf("agentd hosts: %+v; want local, a, b", r.Hosts)
	}
	for _, h := range r.Hosts {
		if h.State != "no daemon" {
			t.Errorf("host %s: %s (%s) before any daemon runs; want no daemon", h.Name, h.State, h.Error)
		}
	}

	// One demo agent named "demo" on each: run -H starts the host's daemon.
	ids := map[string]string{}
	for _, host := range []string{"", "a", "b"} {
		ids[host] = d.runDemo(host)
	}
	for _, host := range []string{"a", "b"} {
		d.demoAsks(host)
	}
	prompts := map[string]string{"a": d.demoPrompt("a"), "b": d.demoPrompt("b")}

	// The same agent asking the same thing in two sessions: each
	// appearance has its own promptId (the session's salt), so an answer
	// bound to one can never be taken by the other.
	if prompts["a"] == prompts["b"] {
		t.Fatalf("a's and b's prompts share the promptId %s", prompts["a"])
	}
	start := time.Now()
	out, _, _ := d.cli("ls", "--all")
	t.Logf("agentd ls --all (%v):\n%s", time.Since(start).Round(time.Millisecond), out)
	r = d.hostsReport("ls", "--all", "--json")
	for i, host := range []string{"", "a", "b"} {
		h := r.Hosts[i]
		if h.State != "up" || len(h.Sessions) != 1 || h.Sessions[0].Name != "demo" || h.Sessions[0].SessionID != ids[host] {
			t.Fatalf("ls --all, host %s: %s (%s) with %+v; want up with demo %s", h.Name, h.State, h.Error, h.Sessions, ids[host])
		}
		if host != "" && (h.Sessions[0].State != "blocked" || h.Sessions[0].Prompt == nil || h.Sessions[0].Prompt.PromptID != prompts[host] ||
			h.Sessions[0].Prompt.Subject == nil || h.Sessions[0].Prompt.Subject.Text != "touch NOTES.md") {
			t.Fatalf("ls --all, host %s: demo is %s with prompt %+v; want blocked on %s asking to touch NOTES.md", h.Name, h.Sessions[0].State, h.Sessions[0].Prompt, prompts[host])
		}
	}

	// a's prompt answered on b: refused, b still waits on its own.
	if out, errOut, code := d.cli("answer", "b:demo", "1", "--prompt", prompts["a"]); code != 1 || !strings.Contains(errOut, "prompt") {
		t.Fatalf("answering b:demo with a's prompt %s: exit %d\n%s%s; want refused (exit 1)", prompts["a"], code, out, errOut)
	}
	// a answered with its own: a goes on, b still waits.
	if out, errOut, code := d.cli("answer", "a:demo", "1", "--prompt", prompts["a"]); code != 0 {
		t.Fatalf("agentd answer a:demo 1: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := d.cli("wait", "a:demo", "--until", "done", "--timeout", "60s"); code != 0 {
		t.Fatalf("a:demo after its answer: exit %d\n%s%s; want its turn done", code, out, errOut)
	}
	out, errOut, code := d.cli("ls", "-H", "b", "--json")
	var bl sessionList
	if code != 0 || json.Unmarshal([]byte(out), &bl) != nil || len(bl.Sessions) != 1 || bl.Sessions[0].State != "blocked" ||
		bl.Sessions[0].Prompt == nil || bl.Sessions[0].Prompt.PromptID != prompts["b"] {
		t.Fatalf("ls -H b after a's answer: exit %d\n%s%s; want b's demo blocked on %s still", code, out, errOut, prompts["b"])
	}

	// b goes away: listed unreachable, a and this machine as before.
	b.Down()
	start = time.Now()
	r = d.hostsReport("ls", "--all", "--json")
	took := time.Since(start)
	if r.Hosts[2].State != "unreachable" || !strings.Contains(r.Hosts[2].Error, "refused") {
		t.Fatalf("with b down: %s (%s); want unreachable, the refusal said", r.Hosts[2].State, r.Hosts[2].Error)
	}
	if r.Hosts[0].State != "up" || r.Hosts[1].State != "up" || len(r.Hosts[1].Sessions) != 1 {
		t.Fatalf("with b down, local and a: %+v", r.Hosts[:2])
	}
	t.Logf("ls --all with b down took %v", took.Round(time.Millisecond))
	if out, errOut, code := d.cli("answer", "b:demo", "1", "--prompt", prompts["b"]); code != cli.ExitUsage || !strings.Contains(errOut, "host b") {
		t.Fatalf("answering b:demo while b is down: exit %d\n%s%s; want a failure naming host b", code, out, errOut)
	}

	// b comes back: its session is there, waiting on the same prompt.
	b.Up()
	r = d.hostsReport("ls", "--all", "--json")
	hb := r.Hosts[2]
	if hb.State != "up" || len(hb.Sessions) != 1 || hb.Sessions[0].SessionID != ids["b"] || hb.Sessions[0].State != "blocked" || hb.Sessions[0].Prompt.PromptID != prompts["b"] {
		t.Fatalf("b back: %s (%s) with %+v; want demo %s blocked on %s", hb.State, hb.Error, hb.Sessions, ids["b"], prompts["b"])
	}
	if out, errOut, code := d.cli("answer", "-H", "b", "demo", "1", "--prompt", prompts["b"]); code != 0 {
		t.Fatalf("agentd answer -H b demo 1: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := d.cli("wait", "b:demo", "--until", "done", "--timeout", "60s"); code != 0 {
		t.Fatalf("b:demo after its answer: exit %d\n%s%s", code, out, errOut)
	}
	// What listing costs: ten sessions on each of a and b.
	for _, host := range []string{"a", "b"} {
		for range 9 {
			if out, errOut, code := d.cli("run", "-H", host, "--", "sleep", "600"); code != 0 {
				t.Fatalf("agentd run -H %s -- sleep 600: exit %d\n%s%s", host, code, out, errOut)
			}
		}
	}
	var times []time.Duration
	for range 3 {
		start := time.Now()
		r = d.hostsReport("ls", "--all", "--json")
		times = append(times, time.Since(start).Round(time.Millisecond))
		if len(r.Hosts[1].Sessions) != 10 || len(r.Hosts[2].Sessions) != 10 {
			t.Fatalf("ls --all: %d and %d sessions on a and b, want 10 each", len(r.Hosts[1].Sessions), len(r.Hosts[2].Sessions))
		}
	}
	t.Logf("agentd ls --all, 2 hosts over ssh with 10 sessions each and this machine: %v", times)

	// This machine's demo was never answered from anywhere.
	out, _, _ = d.cli("ls", "--json")
	if !strings.Contains(out, `"state":"idle"`) || strings.Contains(out, `"state":"blocked"`) {
		t.Errorf("this machine's demo: %s; want it idle, untouched", out)
	}
}

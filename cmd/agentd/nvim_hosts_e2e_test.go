//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Neovim plugin with two other hosts configured, all real: a real
// Neovim (headless, driven over its --listen socket), the plugin's real
// sidecars (agentd --stdio --host NAME --no-start) over two real OpenSSH
// servers on loopback (hoststest), each host's own daemon running the
// demo agent. Nothing is mocked. editors/nvim/ci.sh runs it with
// AGENTD_NVIM set to the Neovim it installed; without it, it is skipped.
//
// Both hosts' sessions have the same id and name and ask the same thing:
// Neovim shows both, keyed and labelled by host, counts both blocked;
// answering host a's from Neovim answers a's only (b's still waits on the
// same promptId, as `agentd ls -H b --json` says); host a taken down
// shows as down with ssh's words, b unaffected, and a's session comes back
// when a returns.
func TestNvimShowsEveryHost(t *testing.T) {
	nvim := os.Getenv("AGENTD_NVIM")
	if nvim == "" {
		t.Skip("AGENTD_NVIM (a Neovim 0.10+) is not set; editors/nvim/ci.sh sets it")
	}
	plugin, err := filepath.Abs("../../editors/nvim")
	if err != nil {
		t.Fatal(err)
	}
	bin := agentdBinary(t)
	d, a, _ := twoHosts(t)

	// The same demo agent, named demo, blocked on the same question, on a and b.
	prompts := map[string]string{}
	for _, host := range []string{"a", "b"} {
		if id := d.runDemo(host); id != "s1" {
			t.Fatalf("agentd run -H %s: session %q, want s1", host, id)
		}
		d.demoAsks(host)
	}
	for _, host := range []string{"a", "b"} {
		prompts[host] = d.demoPrompt(host)
	}

	n := startNvim(t, nvim, plugin, bin, d.env)

	// Both hosts' s1, each under its host; this machine runs no daemon.
	v := n.waitFor("both hosts' demo blocked", func(v nvimView) bool {
		return v.session("a:s1").State == "blocked" && v.session("b:s1").State == "blocked"
	})
	for _, host := range []string{"a", "b"} {
		s := v.session(host + ":s1")
		if s.Host != host || s.ID != "s1" || s.Name != "demo" || s.Label != host+": s1 demo" || s.PromptID != prompts[host] {
			t.Errorf("host %s's session in Neovim: %+v; want s1 demo labelled %q, on prompt %s", host, s, host+": s1 demo", prompts[host])
		}
		if v.Hosts[host] != "up" {
			t.Errorf("host %s in Neovim: %q; want up", host, v.Hosts[host])
		}
	}
	if !strings.Contains(v.Statusline, "● 2") || len(v.Sessions) != 2 {
		t.Errorf("statusline %q with sessions %+v; want 2 blocked, across both hosts", v.Statusline, v.Sessions)
	}

	// Answering a's from Neovim (:Agentd answer a:s1, its first option).
	n.lua(`T.answer("a:s1")`)
	v = n.waitFor("the answer to a:s1 sent", func(v nvimView) bool { return v.Answered != "" })
	if v.Answered != "ok" || !strings.HasPrefix(v.SelectPrompt, "a: s1 demo: ") {
		t.Fatalf("answering a:s1 from Neovim: %q, picker prompt %q; want ok, naming host a", v.Answered, v.SelectPrompt)
	}
	if out, errOut, code := d.cli("wait", "a:demo", "--until", "done", "--timeout", "60s"); code != 0 {
		t.Fatalf("a:demo after Neovim's answer: exit %d\n%s%s; want its turn done", code, out, errOut)
	}
	out, errOut, code := d.cli("ls", "-H", "b", "--json")
	var bl sessionList
	if code != 0 || json.Unmarshal([]byte(out), &bl) != nil || len(bl.Sessions) != 1 || bl.Sessions[0].State != "blocked" ||
		bl.Sessions[0].Prompt == nil || bl.Sessions[0].Prompt.PromptID != prompts["b"] {
		t.Fatalf("ls -H b after Neovim answered a: exit %d\n%s%s; want b's demo blocked on %s still", code, out, errOut, prompts["b"])
	}
	v = n.waitFor("a:s1 no longer blocked in Neovim", func(v nvimView) bool {
		return v.session("a:s1").State != "" && v.session("a:s1").State != "blocked"
	})
	if s := v.session("b:s1"); s.State != "blocked" || s.PromptID != prompts["b"] {
		t.Errorf("b:s1 in Neovim after a's answer: %+v; want blocked on %s", s, prompts["b"])
	}

	// b's terminal, opened from Neovim: b's screen, over b's connection.
	n.lua(`T.open("b:s1")`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		screen, err := n.eval(`T.screen("b:s1")`)
		if err == nil && strings.Contains(screen, "NOTES.md") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b:s1's terminal in Neovim after 60 s: %q (%v); want b's demo asking about NOTES.md", screen, err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Host a taken off the network: down, with ssh's words; b as it was.
	a.Down()
	v = n.waitFor("host a down", func(v nvimView) bool { return strings.HasPrefix(v.Hosts["a"], "down: ") })
	t.Logf("Neovim with host a down: a %q, b %q, sessions %+v", v.Hosts["a"], v.Hosts["b"], v.Sessions)
	if !strings.Contains(v.Hosts["a"], "Connection refused") || v.session("a:s1").State != "" {
		t.Errorf("host a down in Neovim: %q, a:s1 %+v; want ssh's refusal and a's session out of view", v.Hosts["a"], v.session("a:s1"))
	}
	if v.Hosts["b"] != "up" || v.session("b:s1").State != "blocked" {
		t.Errorf("host b while a is down: %q, b:s1 %+v; want up, blocked", v.Hosts["b"], v.session("b:s1"))
	}
	// Back: its session again, as it is there (it ran on).
	a.Up()
	v = n.waitFor("host a back with its session", func(v nvimView) bool {
		return v.Hosts["a"] == "up" && v.session("a:s1").State != ""
	})
	t.Logf("Neovim with host a back: %+v, statusline %q, notes %q", v.Sessions, v.Statusline, v.Notes)
	if s := v.session("a:s1"); s.Name != "demo" || s.State == "exited" {
		t.Errorf("a:s1 after host a came back: %+v; want demo, running", s)
	}

	// a asks again, with Neovim connected: the floating notice names host
	// a, and :Agentd answer with no name answers the notice's session, on a.
	if out, errOut, code := d.cli("send", "a:demo", "Add a NOTES.md file"); code != 0 {
		t.Fatalf("agentd send a:demo again: exit %d\n%s%s", code, out, errOut)
	}
	v = n.waitFor("the notice for a:s1", func(v nvimView) bool { return v.Notice.Session == "a:s1" })
	if len(v.Notice.Lines) == 0 || !strings.Contains(v.Notice.Lines[0], "a: s1 demo needs you") {
		t.Errorf("the notice in Neovim: %q; want its title naming host a", v.Notice.Lines)
	}
	n.lua(`T.answer(nil)`)
	v = n.waitFor("the notice's answer sent", func(v nvimView) bool { return v.Answered != "" })
	if v.Answered != "ok" || !strings.HasPrefix(v.SelectPrompt, "a: s1 demo: ") {
		t.Fatalf("answering the notice's session: %q, picker prompt %q; want ok, naming host a", v.Answered, v.SelectPrompt)
	}
	if out, errOut, code := d.cli("wait", "a:demo", "--until", "done", "--timeout", "60s"); code != 0 {
		t.Fatalf("a:demo after the notice's answer: exit %d\n%s%s; want its turn done", code, out, errOut)
	}
	out, errOut, code = d.cli("ls", "-H", "b", "--json")
	bl = sessionList{}
	if code != 0 || json.Unmarshal([]byte(out), &bl) != nil || len(bl.Sessions) != 1 || bl.Sessions[0].State != "blocked" ||
		bl.Sessions[0].Prompt == nil || bl.Sessions[0].Prompt.PromptID != prompts["b"] {
		t.Errorf("ls -H b at the end: exit %d\n%s%s; want b's demo blocked on %s still", code, out, errOut, prompts["b"])
	}
}

type nvimSession struct {
	Key      string `json:"key"`
	Host     string `json:"host"`
	ID       string `json:"id"`
	Name     string `json:"name"`
	State    string `json:"state"`
	PromptID string `json:"promptId"`
	Label    string `json:"label"`
}

type nvimView struct {
	Sessions     []nvimSession     `json:"sessions"`
	Hosts        map[string]string `json:"hosts"`
	Statusline   string            `json:"statusline"`
	Answered     string            `json:"answered"`
	SelectPrompt string            `json:"selectPrompt"`
	Notes        []string          `json:"notes"`
	Notice       struct {
		Session string   `json:"session"`
		Lines   []string `json:"lines"`
	} `json:"notice"`
}

func (v nvimView) session(key string) nvimSession {
	for _, s := range v.Sessions {
		if s.Key == key {
			return s
		}
	}
	return nvimSession{}
}

type nvimServer struct {
	t    *testing.T
	nvim string
	sock string
}

// What the test reads from and does in Neovim: T.view() (JSON), T.answer(key).
const nvimHostsHelper = `
vim.opt.runtimepath:prepend(vim.env.AGENTD_E2E_PLUGIN)
T = { notes = {}, answered = "", selectPrompt = "" }
vim.notify = function(msg)
  table.insert(T.notes, tostring(msg))
end
require("agentd").setup({ cmd = vim.env.AGENTD_E2E_BIN, autoconnect = true, open_on_new = false })
function T.view()
  local sessions, hosts = require("agentd.sessions"), require("agentd.hosts")
  local out = { sessions = {}, hosts = vim.empty_dict(), notes = T.notes, answered = T.answered, selectPrompt = T.selectPrompt,
    statusline = require("agentd").statusline({ labels = false, highlights = false }) }
  for _, s in ipairs(sessions.list()) do
    table.insert(out.sessions, { key = sessions.key(s), host = s.host or "", id = s.id, name = s.name, state = s.state,
      promptId = s.prompt and s.prompt.promptId or "", label = sessions.label(s) })
  end
  for _, name in ipairs(hosts.names()) do
    out.hosts[name] = hosts.describe(name)
  end
  local n = require("agentd.ui").current_notice()
  out.notice = n and { session = n.session, lines = vim.api.nvim_buf_get_lines(n.buf, 0, -1, false) } or vim.empty_dict()
  return vim.json.encode(out)
end
function T.open(key)
  require("agentd").open(key)
  return ""
end
function T.screen(key)
  local buf = require("agentd.terminal").buffer(key)
  return buf and table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") or ""
end
function T.answer(key)
  T.answered = ""
  vim.ui.select = function(items, opts, cb)
    T.selectPrompt = opts.prompt
    vim.schedule(function()
      cb(items[1])
    end)
  end
  require("agentd").answer(key, function(err)
    T.answered = err and ("error: " .. tostring(err.message)) or "ok"
  end)
  return ""
end
`

func startNvim(t *testing.T, nvim, plugin, bin string, env []string) *nvimServer {
	t.Helper()
	dir := t.TempDir()
	helper := filepath.Join(dir, "helper.lua")
	if err := os.WriteFile(helper, []byte(nvimHostsHelper), 0o600); err != nil {
		t.Fatal(err)
	}
	n := &nvimServer{t: t, nvim: nvim, sock: filepath.Join(dir, "nvim.sock")}
	cmd := exec.Command(nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "--listen", n.sock, "-c", "luafile "+helper)
	cmd.Env = append(env, "AGENTD_E2E_PLUGIN="+plugin, "AGENTD_E2E_BIN="+bin)
	cmd.Dir = dir
	logf, err := os.Create(filepath.Join(dir, "nvim.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Neovim: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "nvim.log"))
			t.Logf("Neovim's output:\n%s", b)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(n.sock); err == nil {
			if _, err := n.eval(`T.view()`); err == nil {
				return n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("Neovim did not listen on %s in 30 s", n.sock)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (n *nvimServer) eval(lua string) (string, error) {
	out, err := exec.Command(n.nvim, "--server", n.sock, "--remote-expr", "luaeval('"+lua+"')").Output()
	return string(out), err
}

func (n *nvimServer) lua(code string) {
	n.t.Helper()
	if out, err := n.eval(code); err != nil {
		n.t.Fatalf("Neovim: %s: %v %s", code, err, out)
	}
}

func (n *nvimServer) view() nvimView {
	n.t.Helper()
	out, err := n.eval(`T.view()`)
	var v nvimView
	if err != nil || json.Unmarshal([]byte(out), &v) != nil {
		n.t.Fatalf("Neovim: T.view(): %v: %q", err, out)
	}
	return v
}

// waitFor waits (at most 60 s) until Neovim's view satisfies ok.
func (n *nvimServer) waitFor(what string, ok func(nvimView) bool) nvimView {
	n.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		v := n.view()
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("Neovim: %s: not after 60 s; it shows %+v", what, v)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

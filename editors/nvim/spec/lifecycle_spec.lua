-- One `agentd --stdio` per Neovim, a window onto agentd's per-user daemon:
-- quitting Neovim or losing the forwarder ends no agent; a lost daemon is
-- reported with the sessions that ended. In private mode agentd is this
-- Neovim's alone and its agents end with it.
local H = require("helpers")

local function cli(...)
  local res = vim.system({ H.bin(), ... }, { text = true }):wait(30000)
  return res.stdout or "", res.code, res.stderr or ""
end

local function text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "")
end

describe("agentd's lifetime", function()
  local agentd
  before_each(function()
    agentd = H.fresh()
  end)
  after_each(function()
    H.stop_all()
  end)

  it("closes only the connection on VimLeavePre; the agents run on in the daemon", function()
    local s = H.demo(agentd)
    local forwarder = H.agentd_pids()
    assert.equals(1, #forwarder)
    local daemon = H.daemon_pid()
    assert.is_number(daemon)
    assert.are_not.equal(forwarder[1], daemon)
    local agent_pid = H.session(s.id).pid
    vim.api.nvim_exec_autocmds("VimLeavePre", {})
    H.wait(5000, function()
      return not H.alive(forwarder[1])
    end, function()
      return "the forwarder is still running"
    end)
    assert.is_true(H.alive(agent_pid))
    assert.is_true(H.alive(daemon))
    local out, code = cli("ls")
    assert.equals(0, code)
    assert.matches("s1 +Demo agent +demo +idle", out)
  end)

  it("reconnects when its forwarder is killed, and the agents run on", function()
    local notes = H.notes()
    local s = H.demo(agentd)
    vim.cmd("Agentd open " .. s.id)
    local buf = vim.api.nvim_get_current_buf()
    H.wait(3000, function()
      return text(buf):find("Welcome", 1, true) ~= nil
    end)
    local old = H.agentd_pids()[1]
    vim.uv.kill(old, "sigkill")
    H.wait(5000, function()
      return H.find_note(notes, "reconnected") ~= nil
    end, function()
      return "no notice; notes: " .. vim.inspect(notes)
    end)
    assert.matches("reconnected to its daemon; 1 session%(s%) still running", H.find_note(notes, "reconnected").msg)
    assert.is_nil(H.find_note(notes, "ended"))
    local now = H.agentd_pids()
    assert.equals(1, #now)
    assert.are_not.equal(old, now[1])
    assert.equals("idle", H.session(s.id).state)
    assert.equals("○ 1 idle", H.statusline())
    -- The terminal took a repaint: what the agent draws next shows there.
    H.to_blocked(agentd, s.id)
    H.wait(5000, function()
      return text(buf):find("Do you want to proceed?", 1, true) ~= nil
    end, function()
      return text(buf)
    end)
    assert.is_nil(text(buf):find("exited", 1, true))
  end)

  it("says which sessions ended when the daemon is killed", function()
    local notes = H.notes()
    local s = H.demo(agentd)
    local s2 = H.demo(agentd)
    vim.cmd("Agentd open " .. s.id)
    local buf = vim.api.nvim_get_current_buf()
    H.wait(3000, function()
      return text(buf):find("Welcome", 1, true) ~= nil
    end)
    local daemon = H.daemon_pid()
    local agent_pid = H.session(s.id).pid
    vim.uv.kill(daemon, "sigkill")
    H.wait(5000, function()
      return H.find_note(notes, "these sessions ended") ~= nil
    end, function()
      return "no notice; notes: " .. vim.inspect(notes)
    end)
    local n = H.find_note(notes, "these sessions ended")
    assert.equals(vim.log.levels.ERROR, n.level)
    assert.matches("agentd's daemon stopped %(exit code 1%); these sessions ended: s1 Demo agent, s2 Demo agent", n.msg)
    assert.matches(vim.pesc(require("agentd.config").log_path()), n.msg)
    H.wait(3000, function()
      return not H.alive(agent_pid)
    end, function()
      return "the agent outlived its daemon (the keeper should end it)"
    end)
    H.wait(2000, function()
      return text(buf):find("[agentd: s1 exited, ended with agentd's daemon]", 1, true) ~= nil
    end, function()
      return text(buf)
    end)
    -- Connected again, to a new daemon, with nothing in it.
    assert.equals("", H.statusline())
    assert.is_nil(H.session(s2.id))
    local again = H.demo(agentd)
    assert.equals("s1", again.id) -- a new daemon numbers from 1 again
    assert.are_not.equal(daemon, H.daemon_pid())
  end)

  it("in private mode, is stopped on VimLeavePre, agents and all", function()
    agentd = H.fresh({ private = true })
    local s = H.demo(agentd)
    local pids = H.agentd_pids()
    assert.equals(1, #pids)
    assert.is_nil(H.daemon_pid())
    local agent_pid = H.session(s.id).pid
    assert.is_true(H.alive(agent_pid))
    vim.api.nvim_exec_autocmds("VimLeavePre", {})
    H.wait(5000, function()
      return not H.alive(pids[1]) and not H.alive(agent_pid)
    end, function()
      return ("agentd alive %s, agent alive %s"):format(tostring(H.alive(pids[1])), tostring(H.alive(agent_pid)))
    end)
    assert.is_false(require("agentd.rpc").running())
  end)

  it("in private mode, reports a crash once, with where its log is, and starts again on the next command", function()
    agentd = H.fresh({ private = true })
    local notes = H.notes()
    local s = H.demo(agentd)
    vim.cmd("Agentd open " .. s.id)
    local old_buf = vim.api.nvim_get_current_buf()
    local pid = H.agentd_pids()[1]
    vim.uv.kill(pid, "sigkill")
    H.wait(3000, function()
      return #notes > 0
    end, function()
      return "no notice of the crash"
    end)
    vim.wait(200)
    assert.equals(1, #notes)
    assert.equals(vim.log.levels.ERROR, notes[1].level)
    assert.matches("agentd stopped unexpectedly %(signal 9%)", notes[1].msg)
    assert.matches(vim.pesc(require("agentd.config").log_path()), notes[1].msg)
    assert.matches(":Agentd log", notes[1].msg)
    assert.equals("exited", H.session(s.id).state)
    assert.equals("", H.statusline())
    H.wait(2000, function()
      return text(old_buf):find("[agentd: s1 exited, agentd is gone]", 1, true) ~= nil
    end, function()
      return text(old_buf)
    end)
    -- (Whether the agent's last screen still shows there depends on when
    -- the terminal leaves its alternate screen; what counts is that the new
    -- agentd's s1 never draws into it.)
    local welcomes = select(2, text(old_buf):gsub("Welcome", ""))

    local again = H.demo(agentd)
    assert.equals("s1", again.id) -- a new agentd numbers from 1 again
    vim.cmd("Agentd open s1")
    local new_buf = vim.api.nvim_get_current_buf()
    assert.are_not.equal(old_buf, new_buf)
    assert.matches("^agentd://s1/Demo agent #%d+$", vim.api.nvim_buf_get_name(new_buf))
    H.wait(3000, function()
      return text(new_buf):find("Welcome", 1, true) ~= nil
    end)
    assert.equals(welcomes, select(2, text(old_buf):gsub("Welcome", "")))
    local pids = H.agentd_pids()
    assert.equals(1, #pids)
    assert.are_not.equal(pid, pids[1])
    assert.equals(1, #notes)
  end)

  it("refuses :Agentd stop while agents run, naming them, and ends them with :Agentd stop!", function()
    local notes = H.notes()
    local s = H.demo(agentd)
    local daemon = H.daemon_pid()
    vim.cmd("Agentd stop")
    H.wait(3000, function()
      return H.find_note(notes, "still run") ~= nil
    end, function()
      return vim.inspect(notes)
    end)
    assert.matches("1 session%(s%) still run: s1 %(Demo agent, idle%); `agentd stop %-%-force` ends them", H.find_note(notes, "still run").msg)
    assert.is_true(H.alive(daemon))
    local agent_pid = H.session(s.id).pid
    vim.cmd("Agentd stop!")
    H.wait(5000, function()
      return not H.alive(daemon) and not H.alive(agent_pid)
    end, function()
      return ("daemon alive %s, agent alive %s"):format(tostring(H.alive(daemon)), tostring(H.alive(agent_pid)))
    end)
    vim.wait(300)
    assert.is_nil(H.find_note(notes, "ended"))
    assert.is_nil(H.find_note(notes, "unexpectedly"))
  end)

  it("outlives a real Neovim that quits; another Neovim counts it and answers it", function()
    local chan = vim.fn.jobstart({
      vim.v.progpath, "--embed", "--headless", "-u", "NONE", "-i", "NONE", "-n",
      "--cmd", "set rtp^=" .. H.root,
    }, { rpc = true })
    local nvim_pid = vim.fn.jobpid(chan)
    vim.rpcrequest(chan, "nvim_exec_lua", [[
      vim.cmd.runtime("plugin/agentd.lua")
      require("agentd").setup({ cmd = ..., open_on_new = false })
      vim.cmd("Agentd new demo")
    ]], { H.bin() })
    local agent_pid
    H.wait(5000, function()
      agent_pid = vim.rpcrequest(chan, "nvim_exec_lua", [[
        local s = require("agentd.sessions").get("s1")
        return s and s.state == "idle" and s.pid or vim.NIL
      ]], {})
      return agent_pid ~= vim.NIL
    end)
    vim.rpcrequest(chan, "nvim_exec_lua", [[require("agentd").send("Add a NOTES.md file", "s1")]], {})
    local out, code = cli("wait", "s1", "--until", "blocked", "--timeout", "20s")
    assert.equals(0, code, out)
    vim.rpcnotify(chan, "nvim_command", "qall!")
    H.wait(6000, function()
      return not H.alive(nvim_pid)
    end, function()
      return "the first Neovim did not quit"
    end)
    assert.is_true(H.alive(agent_pid))

    -- This Neovim connects: it counts the agent the other one started.
    local notes = H.notes()
    agentd.start()
    H.wait(5000, function()
      return H.statusline() == "● 1 blocked"
    end, function()
      return "statusline: " .. H.statusline()
    end)
    assert.matches("1 session%(s%) wait for you: s1 Demo agent", H.find_note(notes, "wait for you").msg)
    H.stub_select(function(items)
      return items[1]
    end)
    vim.cmd("Agentd answer")
    H.wait_state("s1", "done", 10000)
    out = cli("ls")
    assert.matches("s1 +Demo agent +demo +done %(completed%)", out)
  end)
end)

describe("autoconnect", function()
  after_each(function()
    H.stop_all()
  end)

  it("connects at start to a daemon that runs, so the statusline counts its agents at once", function()
    -- Another client (the CLI) starts an agent in the daemon.
    local res = vim.system({ H.bin(), "run", "--name", "elsewhere", "--", H.bin(), "demo-agent" }, { text = true }):wait(15000)
    assert.equals(0, res.code, res.stderr)
    local agentd = H.fresh({ autoconnect = true })
    -- H.fresh stopped that daemon; start the agent again, then connect.
    res = vim.system({ H.bin(), "run", "--name", "elsewhere", "--", H.bin(), "demo-agent" }, { text = true }):wait(15000)
    assert.equals(0, res.code, res.stderr)
    res = vim.system({ H.bin(), "wait", "elsewhere", "--until", "idle", "--timeout", "20s" }, { text = true }):wait(25000)
    assert.equals(0, res.code, res.stderr)
    agentd.connect_if_running()
    H.wait(5000, function()
      return H.statusline() == "○ 1 idle"
    end, function()
      return "statusline: " .. H.statusline()
    end)
    assert.equals("elsewhere", H.session("s1").name)
  end)

  it("starts nothing when no daemon runs, and says nothing", function()
    local notes = H.notes()
    local agentd = H.fresh({ autoconnect = true })
    agentd.connect_if_running()
    H.wait(5000, function()
      return not require("agentd.rpc").running()
    end, function()
      return "still connected"
    end)
    vim.wait(300)
    assert.is_nil(H.daemon_pid())
    assert.same({}, notes)
    assert.equals("", H.statusline())
    -- :Agentd list says there is nothing, without starting a daemon.
    local echoed
    local echo = vim.api.nvim_echo
    vim.api.nvim_echo = function(chunks)
      echoed = table.concat(vim.tbl_map(function(c)
        return c[1]
      end, chunks))
    end
    vim.cmd("Agentd list")
    H.wait(5000, function()
      return echoed ~= nil
    end)
    vim.api.nvim_echo = echo
    assert.matches("no sessions", echoed)
    assert.is_nil(H.daemon_pid())
  end)
end)

-- One agentd per Neovim: started by the first command, stopped on
-- VimLeavePre with the agents it hosts, a crash reported once.
local H = require("helpers")

describe("agentd's lifetime", function()
  local agentd
  before_each(function()
    agentd = H.fresh()
  end)
  after_each(function()
    agentd.stop()
  end)

  it("is stopped on VimLeavePre, agents and all", function()
    local s = H.demo(agentd)
    local pids = H.agentd_pids()
    assert.equals(1, #pids)
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

  it("reports a crash once, with where its log is, and starts again on the next command", function()
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

    local function text(buf)
      return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "")
    end
    H.wait(2000, function()
      return text(old_buf):find("[agentd: s1 exited, agentd is gone]", 1, true) ~= nil
    end, function()
      return text(old_buf)
    end)

    local again = H.demo(agentd)
    assert.equals("s1", again.id) -- a new agentd numbers from 1 again
    vim.cmd("Agentd open s1")
    local new_buf = vim.api.nvim_get_current_buf()
    assert.are_not.equal(old_buf, new_buf)
    assert.matches("^agentd://s1/Demo agent #%d+$", vim.api.nvim_buf_get_name(new_buf))
    H.wait(3000, function()
      return text(new_buf):find("Welcome", 1, true) ~= nil
    end)
    assert.equals(1, select(2, text(old_buf):gsub("Welcome", "")))
    local pids = H.agentd_pids()
    assert.equals(1, #pids)
    assert.are_not.equal(pid, pids[1])
    assert.equals(1, #notes)
  end)

  it("is stopped when Neovim quits, in a real Neovim", function()
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
    local function child_agentd()
      for _, pid in ipairs(vim.api.nvim_get_proc_children(nvim_pid)) do
        if (vim.api.nvim_get_proc(pid) or {}).name == "agentd" then
          return pid
        end
      end
    end
    local agent_pid
    H.wait(5000, function()
      agent_pid = vim.rpcrequest(chan, "nvim_exec_lua", [[
        local s = require("agentd.sessions").get("s1")
        return s and s.state == "idle" and s.pid or vim.NIL
      ]], {})
      return agent_pid ~= vim.NIL
    end)
    local daemon = child_agentd()
    assert.is_number(daemon)
    vim.rpcnotify(chan, "nvim_command", "qall!")
    H.wait(6000, function()
      return not H.alive(nvim_pid) and not H.alive(daemon) and not H.alive(agent_pid)
    end, function()
      return ("nvim %s agentd %s agent %s"):format(tostring(H.alive(nvim_pid)), tostring(H.alive(daemon)), tostring(H.alive(agent_pid)))
    end)
  end)
end)

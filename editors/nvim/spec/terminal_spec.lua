-- :Agentd open: the agent's screen in a terminal buffer, resized with its
-- window, typed into by a person (a child Neovim, where typeahead runs).
local H = require("helpers")

local function buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

-- The screen without the line breaks the terminal wraps long lines with.
local function unwrapped(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "")
end

local function wait_text(buf, pattern, ms)
  H.wait(ms or 5000, function()
    return buffer_text(buf):find(pattern) ~= nil
  end, function()
    return ("%q not in the terminal buffer:\n%s"):format(pattern, buffer_text(buf))
  end)
end

local function session_size(id)
  local err, res = require("agentd.rpc").request_sync("session/list", nil, 30000)
  assert(not err, vim.inspect(err))
  for _, s in ipairs(res.sessions) do
    if s.sessionId == id then
      return s.cols, s.rows
    end
  end
end

describe(":Agentd open", function()
  local agentd
  before_each(function()
    agentd = H.fresh()
  end)
  after_each(function()
    H.stop_all()
  end)

  it("shows the agent's screen in a terminal buffer sized to its window", function()
    local s = H.demo(agentd)
    vim.cmd("Agentd open " .. s.id)
    local buf = vim.api.nvim_get_current_buf()
    assert.equals("terminal", vim.bo[buf].buftype)
    assert.equals(s.id, vim.b[buf].agentd_session)
    assert.matches("^agentd://s%d+/Demo agent$", vim.api.nvim_buf_get_name(buf))
    wait_text(buf, "Welcome to the agentd demo agent")
    wait_text(buf, "%? for help")

    local win = vim.api.nvim_get_current_win()
    H.wait(3000, function()
      return session_size(s.id) == vim.api.nvim_win_get_width(win)
    end, function()
      return ("session is %s cols, window %d"):format(session_size(s.id), vim.api.nvim_win_get_width(win))
    end)
    local _, rows = session_size(s.id)
    assert.equals(vim.api.nvim_win_get_height(win), rows)

    -- The window narrows: the session follows.
    vim.cmd("vertical resize 30")
    -- WinResized comes from the main loop, which a -l script does not run;
    -- the child Neovim below sees it fire for real.
    vim.api.nvim_exec_autocmds("WinResized", {})
    H.wait(3000, function()
      return session_size(s.id) == 30
    end, function()
      return ("session is %s cols after :vertical resize 30"):format(session_size(s.id))
    end)

    -- What the agent draws next arrives as it happens.
    H.to_blocked(agentd, s.id)
    wait_text(buf, "Do you want to proceed%?")
    wait_text(buf, "1%. Yes")
  end)

  it("marks a finished turn seen when opened", function()
    local s = H.demo(agentd)
    H.to_blocked(agentd, s.id)
    H.stub_select(function(items)
      return items[1]
    end)
    H.notes()
    agentd.answer(s.id)
    H.wait_state(s.id, "done")
    vim.cmd("Agentd open")
    H.wait_state(s.id, "idle", 3000)
  end)

  it("writes a closing line when the agent exits", function()
    local s = H.demo(agentd)
    vim.cmd("Agentd open " .. s.id)
    local buf = vim.api.nvim_get_current_buf()
    wait_text(buf, "Welcome")
    local pid = H.session(s.id).pid
    agentd.kill(s.id)
    H.wait(5000, function()
      return unwrapped(buf):find("[agentd: " .. s.id .. " exited, SIG", 1, true) ~= nil
    end, function()
      local now = H.session(s.id) or {}
      local t = require("agentd.terminal")._term(s.id)
      return ("no closing line (the session is %s, exit %s; its pid %d alive: %s; its terminal %s, this buffer %d) in:\n%s"):format(
        tostring(now.state), vim.inspect(now.exit), pid, tostring(H.alive(pid)),
        t and ("buf %d chan %d closed %s"):format(t.buf, t.chan, tostring(t.closed)) or "forgotten", buf, buffer_text(buf))
    end)
    -- SIGHUP ends it; on a loaded machine the 2 s grace may pass first and
    -- SIGKILL end it.
    assert.matches("exited, SIG[HK][UI][PL]L?%]", unwrapped(buf))
  end)

  it("takes a person's keystrokes in terminal mode", function()
    local bin = H.bin()
    local chan = vim.fn.jobstart({
      vim.v.progpath, "--embed", "--headless", "-u", "NONE", "-i", "NONE", "-n",
      "--cmd", "set rtp^=" .. H.root,
    }, { rpc = true })
    assert.is_true(chan > 0)
    local function lua(code, ...)
      return vim.rpcrequest(chan, "nvim_exec_lua", code, { ... })
    end
    lua([[
      vim.cmd.runtime("plugin/agentd.lua")
      require("agentd").setup({ cmd = ..., open_on_new = true, terminal = { split = "current", startinsert = true } })
      vim.cmd("Agentd new demo")
    ]], bin)
    local function state()
      return lua([[local s = require("agentd.sessions").get("s1") return s and s.state or "none"]])
    end
    H.wait(5000, function()
      return state() == "idle"
    end, state)
    -- The window opened first, so the agent started at the window's size.
    assert.same(
      lua([[return { vim.api.nvim_win_get_width(0), vim.api.nvim_win_get_height(0) }]]),
      lua([[local s = require("agentd.sessions").get("s1") return { s.cols, s.rows }]])
    )
    H.wait(3000, function()
      return lua("return vim.api.nvim_get_mode().mode") == "t"
    end, function()
      return "mode " .. lua("return vim.api.nvim_get_mode().mode")
    end)
    -- The demo agent reads one key per read(): Enter goes on its own, as a person's would.
    vim.rpcrequest(chan, "nvim_input", "Add a NOTES.md file")
    H.wait(3000, function()
      return lua([[return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")]]):find("> Add a NOTES.md file", 1, true) ~= nil
    end)
    vim.rpcrequest(chan, "nvim_input", "<CR>")
    H.wait(8000, function()
      return state() == "blocked"
    end, state)
    local function text()
      return lua([[return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")]])
    end
    -- The terminal buffer shows what the state says (a moment later: Neovim
    -- refreshes terminal buffers on a timer).
    H.wait(3000, function()
      return text():find("Do you want to proceed?", 1, true) ~= nil
    end, text)
    assert.matches("> Add a NOTES%.md file", text())
    -- The person answers by typing into the agent itself.
    vim.rpcrequest(chan, "nvim_input", "1")
    H.wait(8000, function()
      return state() == "done"
    end, state)
    assert.equals("completed", lua([[return require("agentd.sessions").get("s1").outcome]]))
    H.wait(3000, function()
      return text():find("Added NOTES.md", 1, true) ~= nil
    end, text)

    -- A real main loop (the demo agent ignores SIGWINCH, so this comes last): the window narrows, WinResized fires, the session follows.
    lua([[vim.cmd("vsplit | vertical resize 33")]])
    local function cols()
      return lua([[
        local err, res = require("agentd.rpc").request_sync("session/list", nil, 30000)
        return res and res.sessions[1].cols or -1
      ]])
    end
    H.wait(3000, function()
      return cols() == 33
    end, function()
      return "session cols " .. cols()
    end)
    vim.fn.jobstop(chan)
  end)
end)

-- Shared by the specs: a fresh plugin against the real agentd binary
-- ($AGENTD_BIN, built by ci.sh), waits that explain themselves on timeout,
-- and stubs for what a person would do (vim.ui.select, vim.ui.input).
local H = {}

H.root = vim.env.AGENTD_NVIM_ROOT

function H.bin()
  local bin = vim.env.AGENTD_BIN
  if not bin or bin == "" then
    bin = vim.fn.exepath("agentd")
  end
  assert(bin ~= "" and vim.fn.executable(bin) == 1, "set AGENTD_BIN to an agentd binary (ci.sh builds one)")
  return bin
end

local real = { notify = vim.notify, select = vim.ui.select, input = vim.ui.input }

local function unload()
  for name in pairs(package.loaded) do
    if name == "agentd" or name:match("^agentd%.") then
      package.loaded[name] = nil
    end
  end
end

---Stops any agentd a previous spec left, forgets all plugin state, wipes
---windows and buffers, and sets the plugin up again (agentd not started).
---@param opts table|nil setup() options over { cmd = $AGENTD_BIN, open_on_new = false }
function H.fresh(opts)
  local rpc = package.loaded["agentd.rpc"]
  if rpc and rpc.running() then
    rpc.stop(3000)
  end
  vim.notify, vim.ui.select, vim.ui.input = real.notify, real.select, real.input
  pcall(vim.api.nvim_del_augroup_by_name, "agentd")
  pcall(vim.api.nvim_del_augroup_by_name, "agentd.terminal")
  vim.cmd("silent! only! | silent! tabonly!")
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then
      pcall(vim.api.nvim_win_close, w, true)
    end
  end
  vim.cmd("enew!")
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if b ~= vim.api.nvim_get_current_buf() then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
  unload()
  vim.g.loaded_agentd = nil
  pcall(vim.api.nvim_del_user_command, "Agentd")
  vim.cmd.runtime("plugin/agentd.lua")
  local agentd = require("agentd")
  agentd.setup(vim.tbl_deep_extend("force", { cmd = H.bin(), open_on_new = false }, opts or {}))
  return agentd
end

---Collects vim.notify calls: returns the list they are appended to.
function H.notes()
  local notes = {}
  vim.notify = function(msg, level)
    table.insert(notes, { msg = msg, level = level })
  end
  return notes
end

function H.find_note(notes, pattern)
  for _, n in ipairs(notes) do
    if n.msg:find(pattern) then
      return n
    end
  end
end

---vim.ui.select stub: records each call; choose(items, opts) returns the
---item to pick (nil cancels).
function H.stub_select(choose)
  local calls = {}
  vim.ui.select = function(items, opts, cb)
    local shown = {}
    for _, it in ipairs(items) do
      table.insert(shown, opts.format_item and opts.format_item(it) or tostring(it))
    end
    table.insert(calls, { items = items, opts = opts, shown = shown })
    vim.schedule(function()
      cb(choose and choose(items, opts, shown) or nil)
    end)
  end
  return calls
end

---Waits for cond (a function); on timeout fails with what describe() says.
function H.wait(ms, cond, describe)
  if vim.wait(ms, cond, 20) then
    return
  end
  error(("timed out after %d ms: %s"):format(ms, describe and describe() or "condition"), 2)
end

function H.session(id)
  return require("agentd.sessions").get(id)
end

---The session's screen, as agentd sees it (session/read).
function H.screen(id)
  local err, res = require("agentd.rpc").request_sync("session/read", { sessionId = id }, 3000)
  if err then
    return "(session/read: " .. (err.message or "?") .. ")"
  end
  return table.concat(res.rows or {}, "\n")
end

function H.wait_state(id, state, ms)
  H.wait(ms or 8000, function()
    local s = H.session(id)
    return s and s.state == state
  end, function()
    local s = H.session(id)
    return ("session %s: want %s, have %s (%s)\nscreen:\n%s"):format(
      id,
      state,
      s and s.state or "none",
      s and s.reason or "",
      H.screen(id)
    )
  end)
end

---Starts the demo agent and waits until it is idle; returns its session.
function H.demo(agentd, opts)
  local got
  agentd.new(vim.tbl_extend("force", { argv = { H.bin(), "demo-agent" }, agent = "demo" }, opts or {}), function(err, s)
    assert(not err, vim.inspect(err))
    got = s
  end)
  H.wait(5000, function()
    return got ~= nil
  end, function()
    return "session/spawn answered nothing"
  end)
  H.wait_state(got.id, "idle")
  return got
end

---Waits for the demo agent, just sent a task, to reach its permission prompt.
---The demo agent takes each read() as one key: when agentd's paste end
---(ESC[201~) and its Enter reach it split differently, it shows "[201~" in
---its composer and never submits (a demo-agent bug, reported). Then Enter
---is pressed again, and said so, rather than failing a plugin spec on it.
function H.wait_blocked_after_send(id)
  local moved = vim.wait(2500, function()
    local s = H.session(id)
    return s and s.state ~= "idle"
  end, 20)
  if not moved and H.screen(id):find("%[201~") then
    io.stdout:write("note: the demo agent missed the Enter after a paste; pressing Enter again\n")
    require("agentd.rpc").request_sync("session/input", { sessionId = id, data = "\r" }, 3000)
  end
  H.wait_state(id, "blocked")
end

---Sends the demo agent its task and waits for its permission prompt.
function H.to_blocked(agentd, id)
  local sent
  agentd.send("Add a NOTES.md file", id, nil, function(err)
    sent = { err = err }
  end)
  H.wait(3000, function()
    return sent ~= nil
  end)
  if sent.err then
    error("runtime_send failed: " .. vim.inspect(sent.err), 2)
  end
  H.wait_blocked_after_send(id)
end

function H.statusline()
  return vim.api.nvim_eval_statusline(require("agentd").statusline(), { use_tabline = false }).str
end

function H.alive(pid)
  return pid and vim.uv.kill(pid, 0) == 0
end

---The agentd processes this Neovim started.
function H.agentd_pids()
  local out = {}
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    local p = vim.api.nvim_get_proc(pid)
    if p and p.name == "agentd" then
      table.insert(out, pid)
    end
  end
  return out
end

return H

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

---The socket of the specs' own daemon (ci.sh sets AGENTD_SOCKET to a
---folder of the run's; the real user's daemon is never touched).
function H.socket()
  local sock = vim.env.AGENTD_SOCKET
  assert(sock and sock ~= "", "set AGENTD_SOCKET to a socket in a private folder (ci.sh does)")
  return sock
end

---The running daemon's pid (from its lock file), or nil.
function H.daemon_pid()
  local f = io.open(H.socket() .. ".lock", "r")
  if not f then
    return nil
  end
  local pid = tonumber((f:read("*a") or ""):match("%d+"))
  f:close()
  return pid and H.alive(pid) and pid or nil
end

---Ends the specs' daemon and every session in it (agentd stop --force).
function H.stop_daemon()
  local res = vim.system({ H.bin(), "stop", "--force" }, { text = true }):wait(60000)
  assert(res.code == 0, "agentd stop --force: " .. (res.stderr or "") .. (res.stdout or ""))
end

---This Neovim's connection closed and the daemon stopped, agents and all.
---The plugin's modules are about to be loaded afresh: the old ones' late
---callbacks (an exit, a reconnect) are silenced first, or they would act
---on the new modules' state.
function H.stop_all()
  local rpc = package.loaded["agentd.rpc"]
  if rpc then
    local nop = function() end
    rpc.set_handlers({ notification = nop, starting = nop, started = nop, exited = nop })
    if rpc.running() then
      rpc.stop(3000)
    end
  end
  H.stop_daemon()
end

---Stops any agentd a previous spec left (the daemon too, so each spec
---starts with no session and ids from s1), forgets all plugin state, wipes
---windows and buffers, and sets the plugin up again (agentd not started).
---@param opts table|nil setup() options over { cmd = $AGENTD_BIN, open_on_new = false, autoconnect = false }
function H.fresh(opts)
  H.stop_all()
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
  agentd.setup(vim.tbl_deep_extend("force", { cmd = H.bin(), open_on_new = false, autoconnect = false }, opts or {}))
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

-- Every wait is for an event; its time is only a guard against a hang. On
-- a busy machine (make test-under-load) starting agentd and an agent can
-- take seconds, so no guard is shorter than this, whatever a spec says.
H.GUARD_MS = 30000

---Waits for cond (a function); on timeout (at least H.GUARD_MS) fails with
---what describe() says.
function H.wait(ms, cond, describe)
  ms = math.max(ms or 0, H.GUARD_MS)
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
  local err, res = require("agentd.rpc").request_sync("session/read", { sessionId = id }, 30000)
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
function H.wait_blocked_after_send(id)
  H.wait_state(id, "blocked")
end

---Sends the demo agent its task and waits for its permission prompt. The
---task decides what it asks about: "please run X" the command X, "edit
---FILE" an edit of FILE with its diff, by default `touch NOTES.md`.
function H.to_blocked(agentd, id, task)
  local sent
  agentd.send(task or "Add a NOTES.md file", id, nil, function(err)
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

---Whether pid runs (a zombie, ended but not yet reaped, does not).
function H.alive(pid)
  if not pid or vim.uv.kill(pid, 0) ~= 0 then
    return false
  end
  local f = io.open("/proc/" .. pid .. "/stat", "r")
  if not f then
    return false
  end
  local stat = f:read("*a") or ""
  f:close()
  return stat:match("%) (%a)") ~= "Z"
end

---The agentd processes this Neovim started (its forwarder; in private mode
---agentd itself).
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

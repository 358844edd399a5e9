-- agentd.nvim: coding agents hosted by agentd, their state in the
-- statusline, their prompts answered from Neovim.
--
--   require('agentd').setup({ ... })        see :h agentd-config
--
-- Nothing runs before a command or an API call needs agentd: then one
-- `agentd --stdio` is started for this Neovim. It forwards to agentd's
-- per-user daemon, which owns the sessions: they outlive this Neovim, and
-- the ones started from VS Code, another Neovim or the agentd CLI show here
-- too. On VimLeavePre only the connection closes (with private = true,
-- agentd is this Neovim's alone and its agents end with it).
local protocol = require("agentd.protocol")
local config = require("agentd.config")
local rpc = require("agentd.rpc")
local sessions = require("agentd.sessions")

local M = {}

local augroup = nil
local crash_reported = false

local function ui()
  return require("agentd.ui")
end

local function terminal()
  return require("agentd.terminal")
end

local function changed(s, n)
  vim.cmd("redrawstatus!")
  vim.api.nvim_exec_autocmds("User", {
    pattern = "AgentdState",
    modeline = false,
    data = { session = s, notification = n },
  })
end

-- A notification from this machine's agentd (host nil) or another host's.
local function on_notification(method, params, host)
  if method == protocol.notifications.state then
    local s, previous = sessions.apply(params, host)
    if previous == nil then
      return -- older than what is known
    end
    ui().on_state(s, params)
    changed(s, params)
  elseif method == protocol.notifications.output then
    if host then
      params = { sessionId = sessions.key_of(host, params.sessionId), data = params.data }
    end
    terminal().output(params)
  elseif method == protocol.notifications.exited then
    local s = sessions.exited(params, host)
    ui().close_notice(sessions.key(s))
    terminal().exited(s)
    changed(s, params)
  end
end
M._on_notification = on_notification

-- While a lost connection is being made again: what was known before.
local reconnecting = nil ---@type {live: agentd.Session[], instance: string|nil, how: string}|nil
-- The daemon this Neovim is connected to (its instance id changes when a
-- new one starts).
local daemon_instance = nil ---@type string|nil

local function how_it_ended(code, signal)
  return signal and signal ~= 0 and ("signal " .. signal) or ("exit code " .. tostring(code))
end

-- agentd did not start (it exited, or refused, before it answered
-- initialize): say why, once, with its command line and stderr. After a lost
-- connection, the sessions it had are gone from this Neovim too.
local function report_failure(failure)
  local lost = reconnecting
  reconnecting = nil
  local msg = rpc.describe_failure(failure)
  if lost then
    sessions.all_exited("agentd.exit")
    for _, s in ipairs(sessions.list(sessions.is_local)) do
      ui().close_notice(s.id)
    end
    terminal().detach_all()
    vim.cmd("redrawstatus!")
    msg = ("agentd: the connection to its daemon ended (%s) and could not be made again.\n%s"):format(lost.how, msg)
  end
  ui().notify(msg, vim.log.levels.ERROR)
end

local function on_exit(code, signal, expected, failure)
  if failure then
    return report_failure(failure)
  end
  local private = config.get().private
  if not expected and not private and not reconnecting then
    -- The forwarder ended: maybe alone (the daemon and its agents run on),
    -- maybe with the daemon. Connect again, to a daemon that runs (this
    -- Neovim does not start one a person may just have stopped), and see
    -- which sessions are left.
    reconnecting = {
      live = vim.deepcopy(sessions.list(function(s)
        return sessions.is_local(s) and sessions.live(s)
      end)),
      instance = daemon_instance,
      how = how_it_ended(code, signal),
    }
    for _, s in ipairs(sessions.list(sessions.is_local)) do
      ui().close_notice(s.id)
    end
    vim.schedule(function()
      local ok, err = rpc.ensure({ no_start = true })
      if not ok then
        local pending = reconnecting
        reconnecting = nil
        sessions.all_exited("agentd.exit")
        terminal().detach_all()
        vim.cmd("redrawstatus!")
        ui().notify(("agentd: the connection to its daemon ended (%s) and could not be made again: %s"):format(pending.how, err), vim.log.levels.ERROR)
      end
    end)
    return
  end
  local lost = reconnecting
  reconnecting = nil
  if not private and expected then
    -- This Neovim let go; the daemon keeps every agent running.
    for _, s in ipairs(sessions.list(sessions.is_local)) do
      ui().close_notice(s.id)
    end
    terminal().detach_all("disconnected")
    sessions.reset()
    vim.cmd("redrawstatus!")
    return
  end
  sessions.all_exited("agentd.exit")
  for _, s in ipairs(sessions.list(sessions.is_local)) do
    ui().close_notice(s.id)
  end
  terminal().detach_all()
  vim.cmd("redrawstatus!")
  if expected or crash_reported then
    return
  end
  crash_reported = true
  local how = lost and lost.how or how_it_ended(code, signal)
  ui().notify(
    ("agentd stopped unexpectedly (%s); its sessions are gone.\n"
      .. "Its log: %s (:Agentd log opens it; run with args = { '--verbose' } for more).\n"
      .. "The next :Agentd command starts it again."):format(how, config.log_path()),
    vim.log.levels.ERROR
  )
end

local function on_starting()
  sessions.reset()
  crash_reported = false
end

-- After a lost connection was made again: say which sessions ended with the
-- daemon (all of them when it is a new daemon), and give the surviving
-- terminals their screens back.
local function report_reconnect(lost, info)
  local same = info and info.daemon and lost.instance and info.daemon.instance == lost.instance
  local ended = {}
  for _, s in ipairs(lost.live) do
    local now = same and sessions.get(s.id)
    if not now or now.state == "exited" then
      table.insert(ended, sessions.label(s))
      if same then
        terminal().gone(s.id, "ended with agentd's daemon")
      end
    end
  end
  if same then
    terminal().reattach()
  else
    terminal().detach_all("ended with agentd's daemon")
  end
  if #ended > 0 then
    ui().notify(
      ("agentd's daemon stopped (%s); these sessions ended: %s.\nIts log: %s (:Agentd log). The next agent you start runs in a new daemon."):format(
        lost.how,
        table.concat(ended, ", "),
        config.log_path()
      ),
      vim.log.levels.ERROR
    )
  elseif #lost.live > 0 then
    ui().notify(("agentd: reconnected to its daemon; %d session(s) still running"):format(#lost.live), vim.log.levels.INFO)
  end
end

-- A newly connected Neovim learns of the prompts already waiting: their
-- notices were raised before it was there to see them.
local function tell_waiting()
  local waiting = {}
  for _, s in ipairs(sessions.list(sessions.is_local)) do
    if s.state == "blocked" then
      table.insert(waiting, sessions.label(s))
    end
  end
  if #waiting > 0 then
    ui().notify(("agentd: %d session(s) wait for you: %s (:Agentd answer)"):format(#waiting, table.concat(waiting, ", ")), vim.log.levels.WARN)
  end
end

-- A :Agentd list waiting for the connection it asked for.
local list_waiting = false

local function on_started(info, err)
  local lost = reconnecting
  reconnecting = nil
  daemon_instance = info and info.daemon and info.daemon.instance
  if err and err.code == rpc.codes.no_daemon then
    -- Connected only if one ran (autoconnect, :Agentd list, a reconnect):
    -- none does. After a lost connection that means the daemon is gone.
    if lost then
      report_reconnect(lost, nil)
    end
    if list_waiting then
      list_waiting = false
      ui().list()
    end
    return
  end
  if err then
    -- agentd refused to start; it exits, and that says why (on_exit).
    return
  end
  if info and info.protocolVersion ~= rpc.PROTOCOL_VERSION then
    ui().notify(
      ("agentd speaks protocol %s, this plugin %d: update the one that is behind"):format(
        tostring(info.protocolVersion),
        rpc.PROTOCOL_VERSION
      ),
      vim.log.levels.WARN
    )
  end
  for _, w in ipairs(info and info.warnings or {}) do
    ui().notify("agentd: " .. w, vim.log.levels.WARN)
  end
  -- A new connection knows nothing of this Neovim's focus yet.
  require("agentd.focus").send()
  -- The daemon's sessions, whoever started them.
  M.refresh(function()
    if lost then
      report_reconnect(lost, info)
    else
      tell_waiting()
    end
    if list_waiting then
      list_waiting = false
      ui().list()
    end
  end)
end

local function wire()
  rpc.set_handlers({ notification = on_notification, exited = on_exit, starting = on_starting, started = on_started })
  if not augroup then
    augroup = vim.api.nvim_create_augroup("agentd", { clear = true })
    vim.api.nvim_create_autocmd("VimLeavePre", {
      group = augroup,
      callback = function()
        rpc.stop()
        require("agentd.hosts").stop()
      end,
    })
    if config.get().autoconnect and not config.get().private then
      if vim.v.vim_did_enter == 1 then
        vim.schedule(M.connect_if_running)
      else
        vim.api.nvim_create_autocmd("VimEnter", { group = augroup, once = true, callback = M.connect_if_running })
      end
    end
    require("agentd.focus").watch(augroup)
    vim.api.nvim_create_autocmd("ColorScheme", {
      group = augroup,
      callback = function()
        require("agentd.statusline").define_highlights()
      end,
    })
  end
  require("agentd.statusline").define_highlights()
end

---Configures the plugin. Starts nothing: agentd starts with the first
---command that needs it.
---@param opts table|nil see :h agentd-config
function M.setup(opts)
  local notes
  config.current, notes = config.build(opts)
  config.notes = notes
  wire()
  for _, n in ipairs(notes) do
    ui().notify(n, vim.log.levels.WARN)
  end
end

local function ready()
  if not config.current then
    config.current = config.build({})
  end
  if not augroup then
    wire()
  end
end

---Starts agentd unless it runs (commands do this themselves).
---@return boolean ok, string|nil err
function M.start()
  ready()
  require("agentd.hosts").start()
  local ok, err = rpc.ensure()
  if not ok then
    ui().notify(err, vim.log.levels.ERROR)
  end
  return ok, err
end

---Ends agentd and every agent it hosts. In private mode that is this
---Neovim's agentd. Otherwise it is the per-user daemon, which every editor
---shares: it refuses while agents run, naming them, unless force is set
---(:Agentd stop!). cb(err).
---@param force boolean|nil
function M.stop(force, cb)
  cb = cb or function() end
  if config.get().private then
    rpc.stop()
    return cb(nil)
  end
  if not rpc.running() then
    return cb(nil)
  end
  rpc.expect_exit(true)
  rpc.request(protocol.methods.stop, { force = force and true or false }, function(err)
    if err then
      rpc.expect_exit(false)
      ui().notify("agentd: " .. (err.message or "?"), err.code == rpc.codes.sessions_running and vim.log.levels.WARN or vim.log.levels.ERROR)
    end
    cb(err)
  end)
end

---Closes this Neovim's connection to agentd; in daemon mode the agents run on.
function M.disconnect()
  rpc.stop()
end

---The sessions agentd reported (a snapshot).
---@return agentd.Session[]
function M.sessions()
  return vim.deepcopy(sessions.list())
end

---Session counts per state: { blocked = 1, working = 2, … }.
function M.counts()
  return sessions.counts()
end

---The statusline component; see :h agentd-statusline.
---@param opts agentd.StatuslineOpts|nil
function M.statusline(opts)
  if not config.current then
    return ""
  end
  return require("agentd.statusline").render(opts)
end

---Agents that speak the Agent Client Protocol, each by its own ACP command:
---`:Agentd new copilot-acp`. agentd runs them over ACP (no terminal: a
---permission request is the blocked state itself).
M.acp_agents = {
  ["claude-acp"] = { argv = { "claude-agent-acp" } },
  ["codex-acp"] = { argv = { "codex-acp" } },
  ["gemini-acp"] = { argv = { "gemini", "--acp" } },
  ["copilot-acp"] = { argv = { "copilot", "--acp" } },
  ["qwen-acp"] = { argv = { "qwen", "--acp" } },
  ["opencode-acp"] = { argv = { "opencode", "acp" } },
}

local function agent_names()
  local names = { demo = true, claude = true, codex = true, gemini = true, opencode = true }
  for name in pairs(M.acp_agents) do
    names[name] = true
  end
  for name in pairs(config.get().agents) do
    names[name] = true
  end
  local srv = rpc.server()
  for _, a in ipairs(srv and srv.agents or {}) do
    if a.process and #a.process > 0 then
      names[a.name] = true
    end
  end
  local out = vim.tbl_keys(names)
  table.sort(out)
  return out
end
M._agent_names = agent_names

---What `:Agentd new NAME` spawns: {argv, agent?, env?, name?, protocol?}.
---@return table|nil spec, string|nil err
function M.resolve_agent(name, extra)
  local c = config.get()
  local spec = c.agents[name]
  local out
  if type(spec) == "string" then
    out = { argv = vim.split(spec, "%s+", { trimempty = true }) }
  elseif type(spec) == "table" and spec.argv then
    out = vim.deepcopy(spec)
    if type(out.argv) == "string" then
      out.argv = vim.split(out.argv, "%s+", { trimempty = true })
    end
  elseif type(spec) == "table" then
    out = { argv = vim.deepcopy(spec) }
  elseif M.acp_agents[name] then
    out = { argv = vim.deepcopy(M.acp_agents[name].argv), protocol = "acp" }
  elseif name == "demo" then
    local bin, err = config.binary(c)
    if not bin then
      return nil, err
    end
    out = { argv = { bin, "demo-agent" }, agent = "demo" }
  else
    local argv0 = name
    local srv = rpc.server()
    for _, a in ipairs(srv and srv.agents or {}) do
      if a.name == name and a.process and a.process[1] then
        argv0 = a.process[1]
      end
    end
    out = { argv = { argv0 } }
  end
  vim.list_extend(out.argv, extra or {})
  if #out.argv == 0 then
    return nil, ("agentd: agent %q has an empty argv"):format(name)
  end
  return out
end

local spawn

---Starts an agent. what: a name (:h agentd-agents) or {argv, agent?, env?,
---name?, cwd?, open?}; args: more arguments after a name's argv.
---cb(err, session). Nothing opens before agentd has answered initialize:
---when it does not start, that is said once and no window is left behind.
function M.new(what, cb, args)
  cb = cb or function() end
  if not M.start() then
    return cb({ message = "agentd is not running" })
  end
  rpc.when_ready(function(rerr)
    if rerr then
      if not rerr.failure then
        ui().notify("agentd: " .. (rerr.message or "?"), vim.log.levels.ERROR)
      end
      return cb(rerr)
    end
    spawn(what, args, cb)
  end)
end

-- What :Agentd new NAME does when NAME is neither an agent it knows nor a
-- program agentd could run.
local function not_an_agent(name, serr)
  return ("agentd: %q is neither an agent name (:Agentd new <Tab> lists them) nor a program agentd could run: %s\n"
    .. ":Agentd new NAME [ARGS…] starts an agent by name, :Agentd new /path/to/program [ARGS…] runs a program"):format(
    name,
    (serr.message or "?"):gsub("^session/spawn: ", "")
  )
end

spawn = function(what, args, cb)
  local c = config.get()
  local spec, err
  local by_name = nil
  if type(what) == "table" and what.argv then
    spec = vim.deepcopy(what)
    vim.list_extend(spec.argv, args or {})
  else
    by_name = what or c.default_agent or "demo"
    spec, err = M.resolve_agent(by_name, args)
  end
  if not spec then
    ui().notify(err, vim.log.levels.ERROR)
    return cb({ message = err })
  end
  local known = by_name and vim.tbl_contains(M._agent_names(), by_name)
  local open = spec.open
  if open == nil then
    open = c.open_on_new
  end
  local acp = spec.protocol == "acp"
  if acp then
    open = false -- an ACP agent has no screen
  end
  local params = {
    argv = spec.argv,
    cwd = spec.cwd or vim.fn.getcwd(),
    env = spec.env and next(spec.env) and spec.env or nil, -- an empty table would go out as []
    agent = spec.agent,
    name = spec.name,
    cols = c.cols,
    rows = c.rows,
    protocol = acp and "acp" or nil,
    authMethod = spec.authMethod,
  }
  -- The window first, so the agent starts at the size it is shown at.
  local buf
  if open then
    buf, params.cols, params.rows = terminal().new_window()
  end
  rpc.request(protocol.methods.spawn, params, function(serr, result)
    if serr then
      if buf and vim.api.nvim_buf_is_valid(buf) then
        vim.api.nvim_buf_delete(buf, { force = true })
      end
      if serr.code == rpc.codes.auth_required and type(serr.data) == "table" then
        return M.login(spec, serr.data, cb)
      end
      if serr.code == require("agentd.transport").GONE then
        return cb(serr) -- agentd exited: on_exit says so
      end
      if by_name and not known and serr.code == rpc.codes.spawn_failed then
        ui().notify(not_an_agent(by_name, serr), vim.log.levels.ERROR)
        return cb(serr)
      end
      ui().notify(
        ("agentd: could not start %s: %s"):format(rpc.cmdline(spec.argv), serr.message or "?"),
        vim.log.levels.ERROR
      )
      return cb(serr)
    end
    local s = sessions.upsert(result)
    changed(s, nil)
    if buf and vim.api.nvim_buf_is_valid(buf) then
      terminal().attach(s, buf)
    end
    if result.loginSessionId then
      -- The agent logs in in a terminal first: show the login agentd runs.
      M.refresh(function()
        local login = sessions.get(result.loginSessionId)
        if login then
          terminal().open(login)
        end
        cb(nil, s)
      end)
      return
    end
    cb(nil, s)
  end)
end

---An ACP agent that will not start before a login (error -32014): its
---methods are offered with vim.ui.select. A terminal method runs as a
---session of its own (agentd runs the command the agent named) and opens in
---a terminal buffer; the agent starts when it ends well. An env_var method
---says what to set.
function M.login(spec, data, cb)
  local info = type(data.agentInfo) == "table" and data.agentInfo or {}
  local who = (info.title and info.title ~= "" and info.title) or info.name or spec.argv[1]
  local methods = type(data.authMethods) == "table" and data.authMethods or {}
  if #methods == 0 then
    local msg = ("agentd: %s needs you to log in (%s) and offers no way to from here"):format(who, data.message or "?")
    ui().notify(msg, vim.log.levels.ERROR)
    return cb({ message = msg })
  end
  vim.ui.select(methods, {
    prompt = ("%s needs you to log in: %s"):format(who, data.message or ""),
    kind = "agentd.login",
    format_item = function(m)
      local d = m.description and m.description ~= "" and (" — " .. m.description) or ""
      return (m.name or m.id) .. d
    end,
  }, function(m)
    if not m then
      return cb({ message = "no login method chosen" })
    end
    if m.type == "env_var" then
      local msg = ("agentd: %s: set %s in its env, then start it again"):format(who, table.concat(m.vars or {}, ", "))
      ui().notify(msg, vim.log.levels.WARN)
      return cb({ message = msg })
    end
    local again = vim.deepcopy(spec)
    again.authMethod = m.id
    M.new(again, cb)
  end)
end

---Refreshes the sessions from agentd (session/list); cb(err, sessions).
function M.refresh(cb)
  cb = cb or function() end
  if not rpc.running() then
    return cb(nil, sessions.list())
  end
  rpc.request(protocol.methods.list, nil, function(err, result)
    if not err and result then
      sessions.replace(result.sessions)
      vim.cmd("redrawstatus!")
    end
    cb(err, sessions.list())
  end)
end

---Echoes the sessions: every session of the daemon, connecting to it first
---if one runs (it starts none).
function M.list()
  ready()
  local hosts = require("agentd.hosts")
  hosts.start()
  if hosts.multi() and not rpc.running() and not config.get().private then
    -- Every host's sessions, this machine's daemon if one runs.
    list_waiting = true
    if not rpc.ensure({ no_start = true }) then
      list_waiting = false
      ui().list()
    end
    return
  end
  if not rpc.running() then
    list_waiting = true
    local ok, err = rpc.ensure({ no_start = true })
    if not ok then
      list_waiting = false
      ui().notify(err, vim.log.levels.ERROR)
    end
    return
  end
  M.refresh(function()
    ui().list()
  end)
end

---Connects to agentd's daemon if one runs, starting none: what Neovim does
---at VimEnter when config autoconnect is set.
function M.connect_if_running()
  ready()
  if config.get().private then
    return
  end
  require("agentd.hosts").start()
  if rpc.running() then
    return
  end
  rpc.ensure({ no_start = true })
end

local function blocked(s)
  return s.state == "blocked"
end

---Answers a blocked session's prompt: the session named, the one in the
---notice, the only blocked one, or one the person picks. cb(err, result).
function M.answer(key, cb)
  ready()
  if not key then
    local n = ui().current_notice()
    key = n and n.session
  end
  ui().pick(key, blocked, "Answer", function(s)
    ui().answer(s, nil, cb)
  end)
end

---Opens what a blocked session's prompt approves, whole: the diff of an
---edit (filetype diff), a multi-line command, in a read-only split.
function M.show(key)
  ready()
  if not key then
    local n = ui().current_notice()
    key = n and n.session
  end
  ui().pick(key, blocked, "Show", function(s)
    ui().show_subject(s)
  end)
end

---Shows a session's screen in a terminal window.
function M.open(key)
  ready()
  ui().pick(key, sessions.live, "Open", function(s)
    terminal().open(s)
  end)
end

---Types text into a session (runtime_send). While the session is blocked
---agentd refuses it and the prompt is offered instead. cb(err).
---@param text string
---@param key string|nil a session id or name
---@param opts {submit: boolean}|nil
function M.send(text, key, opts, cb)
  ready()
  cb = cb or function() end
  if not text or text == "" then
    return cb({ message = "nothing to send" })
  end
  local submit = (opts and opts.submit)
  if submit == nil then
    submit = config.get().send.submit
  end
  ui().pick(key, sessions.live, "Send to", function(s)
    require("agentd.hosts").request(sessions.key(s), protocol.methods.send, { text = text, submit = submit }, function(err)
      if err and err.code == rpc.codes.session_blocked then
        local prompt = err.data and err.data ~= vim.NIL and err.data.prompt
        ui().notify(
          ("agentd: %s is waiting on a prompt; answer it first"):format(sessions.label(s)),
          vim.log.levels.WARN
        )
        ui().answer(s, prompt ~= vim.NIL and prompt or nil)
      elseif err then
        ui().notify(("agentd: sending to %s failed: %s"):format(sessions.label(s), err.message or "?"), vim.log.levels.ERROR)
      end
      cb(err)
    end)
  end)
end

---Signals a session's process group (default SIGHUP).
function M.kill(key, signal)
  ready()
  ui().pick(key, sessions.live, "Kill", function(s)
    require("agentd.hosts").request(sessions.key(s), protocol.methods.kill, { signal = signal }, function(err)
      if err then
        ui().notify(("agentd: killing %s failed: %s"):format(sessions.label(s), err.message or "?"), vim.log.levels.ERROR)
      end
    end)
  end)
end

---Closes the floating notice (the next waiting one shows).
function M.dismiss()
  ui().dismiss()
end

---Opens agentd's log file.
function M.log()
  vim.cmd.split(vim.fn.fnameescape(config.log_path()))
end

return M

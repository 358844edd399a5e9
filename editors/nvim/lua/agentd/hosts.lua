-- Other machines ([[hosts]] in agentd's config.toml, docs/hosts.md): when
-- any is configured, one more `agentd --stdio --host NAME --no-start` per
-- host beside this machine's connection (agentd.rpc, unchanged), so the
-- plugin shows every host's sessions, keyed by (host, session id), and
-- sends each action to the connection of its session's host.
--
-- A host's connection is "connecting", "up", "no daemon" (none runs there:
-- -32042; none is started), "down" (ssh could not reach it: initialize's
-- error, kept as message) or "reconnecting" (its sidecar exited). One that
-- is not up is tried again after 1 s, doubling to 30 s. A connection that
-- goes away ends no session: the host's sessions leave this Neovim's view
-- until it is up again, and run on there.
local protocol = require("agentd.protocol")
local config = require("agentd.config")
local sessions = require("agentd.sessions")

local M = {}

M.FIRST_DELAY = 1000
M.MAX_DELAY = 30000

-- What starts a sidecar, and what waits before a retry (the specs put
-- fakes in).
M._transport = require("agentd.transport")
M._defer = vim.defer_fn

---@class agentd.HostConn
---@field name string
---@field state string connecting|up|no daemon|down|reconnecting
---@field message string|nil why it is down, as ssh said it (one line, cleaned)
---@field client agentd.Transport|nil
---@field delay integer the next retry's wait, ms
---@field gen integer
---@field retry boolean a retry is scheduled
---@field stopped boolean

local checked = false
local local_name = nil ---@type string|nil
local order = {} ---@type string[] the other hosts, in config order
local conns = {} ---@type table<string, agentd.HostConn>

local function handle(host, method, params)
  require("agentd")._on_notification(method, params, host)
end

---One line of untrusted text (ssh's words) fit for a notice or a listing:
---control characters dropped, white space runs as one space, bounded.
function M.clean(text, max)
  text = tostring(text or ""):gsub("%s+", " "):gsub("%c", "")
  text = vim.trim(text)
  max = max or 300
  if vim.fn.strchars(text) > max then
    text = vim.fn.strcharpart(text, 0, max - 1) .. "…"
  end
  return text
end

---The configured hosts, as `agentd hosts --configured` prints them:
---{ {name, local?, ssh?}, … }, or nil when it cannot say (an agentd
---without the command, no agentd at all).
function M.read_configured(c)
  c = c or config.get()
  local base = config.command(c)
  if not base then
    return nil
  end
  local argv = vim.list_extend(base, { "hosts", "--configured" })
  local ok, proc = pcall(vim.system, argv, { text = true, env = c.env })
  if not ok then
    return nil
  end
  local res = proc:wait(10000)
  if res.code ~= 0 or not res.stdout then
    return nil
  end
  local dok, out = pcall(vim.json.decode, res.stdout, { luanil = { object = true } })
  if not dok or type(out) ~= "table" or type(out.hosts) ~= "table" then
    return nil
  end
  return out.hosts
end

---Whether other hosts are configured (and their connections kept).
function M.multi()
  return #order > 0
end

---This machine's name when other hosts are configured, else nil.
function M.local_name()
  return local_name
end

---The other hosts' names, in config order.
function M.names()
  return vim.deepcopy(order)
end

---A host's connection state: {state, message} (nil for an unknown host).
function M.status(name)
  local h = conns[name]
  return h and { state = h.state, message = h.message } or nil
end

local function changed()
  vim.cmd("redrawstatus!")
  pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "AgentdHosts", modeline = false })
end

-- The host's sessions leave the view (they run on there), with their notices.
local function forget(h)
  for _, s in ipairs(sessions.list(function(s)
    return s.host == h.name
  end)) do
    require("agentd.ui").close_notice(sessions.key(s))
  end
  sessions.reset(h.name)
end

local connect

local function schedule_retry(h)
  if h.stopped or h.retry then
    return
  end
  h.retry = true
  local delay = h.delay
  h.delay = math.min(h.delay * 2, M.MAX_DELAY)
  M._defer(function()
    h.retry = false
    if not h.stopped and not h.client then
      connect(h)
    end
  end, delay)
end

local function params_initialize()
  local version = vim.version()
  return {
    clientInfo = { name = "agentd.nvim", version = ("%d.%d.%d"):format(version.major, version.minor, version.patch) },
    capabilities = vim.empty_dict(),
    workspaceFolders = { vim.fn.getcwd() },
  }
end

-- The host's sessions afresh (after initialize).
local function list(h, gen)
  h.client.request(protocol.methods.list, vim.empty_dict(), function(err, result)
    if gen ~= h.gen or err or not result then
      return
    end
    sessions.replace(result.sessions, h.name)
    changed()
    -- Prompts already waiting there: their notices were raised before this
    -- connection was there to see them (as for this machine's).
    local waiting = {}
    for _, s in ipairs(sessions.list(function(s)
      return s.host == h.name and s.state == "blocked"
    end)) do
      table.insert(waiting, sessions.label(s))
    end
    if #waiting > 0 then
      require("agentd.ui").notify(
        ("agentd: %d session(s) wait for you: %s (:Agentd answer)"):format(#waiting, table.concat(waiting, ", ")),
        vim.log.levels.WARN
      )
    end
    require("agentd.terminal").reattach(h.name)
  end)
end

connect = function(h)
  local c = config.get()
  local argv = require("agentd.rpc").argv_for(c)
  vim.list_extend(argv, { "--host", h.name, "--no-start" })
  h.gen = h.gen + 1
  local gen = h.gen
  local client, serr = M._transport.start(argv, {
    env = c.env,
    on_notification = function(method, params)
      if gen == h.gen and h.state == "up" then
        handle(h.name, method, params or {})
      end
    end,
    on_exit = function()
      if gen ~= h.gen then
        return
      end
      h.client = nil
      if h.stopped then
        return
      end
      if h.state == "up" then
        -- The sidecar ended (ssh dropped, the host went away): its
        -- sessions run on there; they show again once it is back.
        h.state = "reconnecting"
        h.message = nil
        forget(h)
        changed()
      end
      schedule_retry(h)
    end,
  })
  if not client then
    h.state, h.message = "down", M.clean(serr)
    forget(h)
    changed()
    return schedule_retry(h)
  end
  h.client = client
  client.request(protocol.methods.initialize, params_initialize(), function(err, result)
    if gen ~= h.gen or h.stopped then
      return
    end
    if err then
      if err.code == require("agentd.rpc").codes.no_daemon then
        h.state, h.message = "no daemon", nil
      elseif err.code == M._transport.GONE then
        -- It ended before it answered: its last words say why.
        local said = client.stderr and client.stderr() or {}
        h.state, h.message = "down", M.clean(said[#said] or err.message)
      else
        h.state, h.message = "down", M.clean(err.message)
      end
      forget(h)
      changed()
      -- The sidecar exits after its refusal; one that stays is ended.
      vim.defer_fn(function()
        if gen == h.gen and client and not client.is_closing() then
          client.terminate()
        end
      end, 2000)
      return
    end
    h.state, h.message, h.delay, h.server = "up", nil, M.FIRST_DELAY, result
    client.notify(protocol.methods.focus, {
      focused = require("agentd.focus").focused(),
      desktopNotifications = c.desktop_notifications,
    })
    changed()
    list(h, gen)
  end)
end

---Reads the configured hosts once and, when there are others than this
---machine, connects to each. With only this machine (or private = true)
---it does nothing: the plugin is as it was.
---@param hosts table|nil the configured hosts (the specs pass them)
function M.start(hosts)
  if checked then
    return
  end
  checked = true
  local c = config.get()
  if c.private then
    return
  end
  hosts = hosts or M.read_configured(c)
  if type(hosts) ~= "table" then
    return
  end
  local others = {}
  for _, h in ipairs(hosts) do
    if type(h) == "table" and type(h.name) == "string" and h.name ~= "" then
      if h["local"] then
        local_name = h.name
      elseif not h.name:find(":", 1, true) then
        table.insert(others, h.name)
      end
    end
  end
  if #others == 0 then
    return
  end
  local_name = local_name or "local"
  sessions.local_host = local_name
  order = others
  for _, name in ipairs(order) do
    conns[name] = { name = name, state = "connecting", delay = M.FIRST_DELAY, gen = 0, retry = false, stopped = false }
    connect(conns[name])
  end
  changed()
end

---Closes every host's connection (VimLeavePre, :Agentd disconnect): the
---sessions run on there.
function M.stop()
  for _, h in pairs(conns) do
    h.stopped = true
    local cl = h.client
    h.client = nil
    if cl and not cl.is_closing() then
      cl.notify(protocol.methods.exit, vim.empty_dict())
      cl.terminate()
    end
    sessions.reset(h.name)
  end
end

---Forgets everything (the specs).
function M._reset()
  M.stop()
  checked, local_name, order, conns = false, nil, {}, {}
  sessions.local_host = nil
end

---Whether the connection of host (nil: this machine) is up.
function M.running(host)
  if not host then
    return require("agentd.rpc").running()
  end
  local h = conns[host]
  return h ~= nil and h.client ~= nil and h.state == "up"
end

---Sends a request about the session keyed key ("s1", "a:s1") to its
---host's connection and no other, with sessionId its id there.
---cb(err, result).
---@param key string
---@param method string
---@param params table|nil
function M.request(key, method, params, cb)
  cb = cb or function() end
  local host, id = sessions.split(key)
  if host and not conns[host] then
    host, id = nil, key -- not a host: a plain id
  end
  params = vim.tbl_extend("force", params or {}, { sessionId = id })
  if not host then
    return require("agentd.rpc").request(method, params, cb)
  end
  local h = conns[host]
  if not (h.client and h.state == "up") then
    vim.schedule(function()
      cb({ code = -1, message = ("agentd: host %s is %s"):format(host, h.state) })
    end)
    return
  end
  if not h.client.request(method, params, cb) then
    vim.schedule(function()
      cb({ code = -1, message = ("agentd: the connection to host %s is closed"):format(host) })
    end)
  end
end

---Sends a notification to every host that is up (client/focus).
function M.notify_all(method, params)
  for _, h in pairs(conns) do
    if h.client and h.state == "up" then
      h.client.notify(method, params)
    end
  end
end

---How a host's state reads: "up", "no daemon", "down: ssh: connect …".
function M.describe(name)
  local h = conns[name]
  if not h then
    return "?"
  end
  if h.message and h.message ~= "" then
    return h.state .. ": " .. h.message
  end
  return h.state
end

return M

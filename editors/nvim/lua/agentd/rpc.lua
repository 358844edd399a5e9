-- The connection to `agentd --stdio`: one process per Neovim instance,
-- JSON-RPC with Content-Length framing (agentd.transport). By default that
-- process forwards to agentd's per-user daemon, which owns the sessions;
-- with config private it is agentd itself.
local protocol = require("agentd.protocol")
local config = require("agentd.config")
local transport = require("agentd.transport")

local M = {}

---@class agentd.Handlers
---@field notification fun(method: string, params: table)
---@field starting fun()
---@field started fun(info: table|nil, err: table|nil)
---@field exited fun(code: integer, signal: integer, expected: boolean, failure: agentd.StartFailure|nil)

---Why agentd did not start: it could not be run, or it exited (or refused
---initialize) before it answered initialize.
---@class agentd.StartFailure
---@field argv string[] the command line
---@field code integer|nil exit code
---@field signal integer|nil
---@field stderr string[]|nil the lines it printed (see transport.lines)
---@field error table|nil initialize's error answer
---@field reason string|nil when it could not be run at all
---@field note string|nil a line said after the first
---@field hint boolean|nil false: leave out where to look next

---@type agentd.Handlers
local handlers = {
  notification = function() end,
  starting = function() end,
  started = function() end,
  exited = function() end,
}

local client = nil ---@type agentd.Transport|nil
local generation = 0 -- bumped on every start, so a late exit of an old process is ignored
local stopping = false
local server = nil -- initialize result
local probing = false -- the client was started with no_start and has not initialized yet
-- The agentd being started: its command line, and who waits for it to answer
-- initialize (M.when_ready).
local attempt = nil ---@type {argv: string[], waiters: fun(err: table|nil)[], error: table|nil, transport: agentd.Transport|nil}|nil

-- The protocol's version and error codes, generated from
-- rpc/protocol/names.go (agentd/protocol.lua).
M.PROTOCOL_VERSION = protocol.version
M.codes = protocol.codes

---@param h agentd.Handlers
function M.set_handlers(h)
  handlers = vim.tbl_extend("force", handlers, h)
end

function M.running()
  return client ~= nil and not client.is_closing()
end

---The initialize result of the running agentd, or nil.
function M.server()
  return server
end

---The process id of the running `agentd --stdio` (a child of this Neovim:
---the forwarder, or in private mode agentd itself), or nil.
function M.pid()
  if not M.running() then
    return nil
  end
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    local p = vim.api.nvim_get_proc(pid)
    if p and p.name == "agentd" then
      return pid
    end
  end
end

local function argv_for(c)
  local argv, err, base = config.command(c)
  if not argv then
    argv = base or {}
  end
  table.insert(argv, "--stdio")
  if c.private then
    table.insert(argv, "--private")
  end
  if c.socket then
    vim.list_extend(argv, { "--socket", vim.fn.fnamemodify(c.socket, ":p") })
  end
  if c.log then
    vim.list_extend(argv, { "--log", vim.fn.fnamemodify(c.log, ":p") })
  end
  if c.cooldown then
    vim.list_extend(argv, { "--cooldown", c.cooldown })
  end
  vim.list_extend(argv, c.args or {})
  return argv, err
end
M.argv_for = argv_for

---A command line as a person would type it in a shell.
---@param argv string[]
function M.cmdline(argv)
  local words = {}
  for _, a in ipairs(argv) do
    table.insert(words, a:match("^[%w@%%+=:,./_-]+$") and a or vim.fn.shellescape(a))
  end
  return table.concat(words, " ")
end

---"exited with code 2", "was ended by signal 9".
function M.how_it_ended(code, signal)
  if signal and signal ~= 0 then
    return "was ended by signal " .. signal
  end
  return "exited with code " .. tostring(code)
end

---The one message that says why agentd did not start: what went wrong, the
---command line, and what agentd printed on stderr.
---@param f agentd.StartFailure
---@param headline string|nil the first line, when not agentd's start failed
---@return string
function M.describe_failure(f, headline)
  local lines = {}
  local said = f.error and f.error.message and tostring(f.error.message):gsub("^agentd: ", "") or nil
  if headline then
    table.insert(lines, headline)
  elseif f.reason then
    table.insert(lines, "agentd did not start: " .. f.reason)
  elseif said then
    table.insert(lines, ("agentd did not start: it refused initialize: %s (it %s)"):format(said, M.how_it_ended(f.code, f.signal)))
  else
    table.insert(lines, ("agentd did not start: it %s before it answered initialize"):format(M.how_it_ended(f.code, f.signal)))
  end
  if f.note then
    table.insert(lines, f.note)
  end
  table.insert(lines, "command: " .. M.cmdline(f.argv))
  local err = {}
  for _, l in ipairs(transport.excerpt(f.stderr or {})) do
    -- The refusal agentd also wrote to stderr is said above already.
    if not (said and said:find(vim.trim(l:gsub("^agentd: ", "")), 1, true)) then
      table.insert(err, l)
    end
  end
  if #err == 1 then
    table.insert(lines, "stderr: " .. err[1])
  elseif #err > 1 then
    table.insert(lines, "stderr:")
    for _, l in ipairs(err) do
      table.insert(lines, "  " .. l)
    end
  end
  if f.hint ~= false then
    table.insert(lines, "Check cmd and args in require('agentd').setup(); :checkhealth agentd runs the command")
  end
  return table.concat(lines, "\n")
end

local function settle(a, err)
  local waiters = a.waiters
  a.waiters = {}
  for _, w in ipairs(waiters) do
    w(err)
  end
end

---Calls cb(nil) once the running agentd has answered initialize, or
---cb(err) when it did not start (err.failure then says why: it was told
---already, through handlers.exited) or refused to connect (err.code).
---@param cb fun(err: table|nil)
function M.when_ready(cb)
  if server and M.running() then
    return cb(nil)
  end
  if not (attempt and M.running()) then
    return cb({ code = -1, message = "agentd is not running" })
  end
  table.insert(attempt.waiters, cb)
end

---Starts agentd unless it runs; returns true, or false and why not (the
---program is missing or cannot be run: nothing was started). When agentd
---starts but exits before it answers initialize, handlers.exited gets the
---failure, and M.when_ready's callers an error.
---opts.no_start: connect only to a daemon already running (initialize is
---then refused with codes.no_daemon when none runs).
---@param opts {no_start: boolean}|nil
---@return boolean ok, string|nil err
function M.ensure(opts)
  if M.running() and probing and not (opts and opts.no_start) then
    -- A connection that may only find no daemon is still out (autoconnect):
    -- let it find the daemon or not before this needs one.
    vim.wait(30000, function()
      return not probing
    end, 10)
  end
  if M.running() then
    return true
  end
  local c = config.get()
  local argv, err = argv_for(c)
  if err then
    return false, ("%s\ncommand: %s"):format(err, M.cmdline(argv))
  end
  if opts and opts.no_start and not c.private then
    table.insert(argv, "--no-start")
  end
  if c.log then
    vim.fn.mkdir(vim.fn.fnamemodify(vim.fn.fnamemodify(c.log, ":p"), ":h"), "p")
  end
  generation = generation + 1
  local gen = generation
  -- A connection that may only find no daemon ends without it being news.
  local only_if_running = opts and opts.no_start and not c.private
  local initialized = false
  probing = only_if_running and true or false
  handlers.starting()
  stopping = false
  server = nil
  local a = { argv = argv, waiters = {} }
  attempt = a
  local started, serr = transport.start(argv, {
    env = c.env,
    on_notification = function(method, params)
      if gen == generation then
        handlers.notification(method, params or {})
      end
    end,
    on_exit = function(code, signal)
      if gen ~= generation then
        return
      end
      local stderr = a.transport and a.transport.stderr() or {}
      local refused = a.error
      -- Not started: it ended before it answered initialize, or refused it
      -- (a daemon of another protocol, a socket folder it will not use),
      -- unless it said "no daemon runs" to a connection that asked for one
      -- only if it runs.
      local failure = nil
      if not initialized and not stopping and not (only_if_running and refused and refused.code == M.codes.no_daemon) then
        failure = { argv = argv, code = code, signal = signal, stderr = stderr, error = refused }
      end
      local expected = stopping or (only_if_running and not initialized) or failure ~= nil
      client, server = nil, nil
      probing = false
      if attempt == a then
        attempt = nil
      end
      settle(a, failure and { code = -1, message = M.describe_failure(failure), failure = failure } or { code = -1, message = "agentd exited" })
      handlers.exited(code, signal, expected, failure)
    end,
  })
  if not started then
    attempt = nil
    probing = false
    return false, M.describe_failure({ argv = argv, reason = serr })
  end
  client = started
  a.transport = started
  local version = vim.version()
  client.request(protocol.methods.initialize, {
    clientInfo = { name = "agentd.nvim", version = ("%d.%d.%d"):format(version.major, version.minor, version.patch) },
    capabilities = vim.empty_dict(), -- {} would be encoded as [], which agentd refuses
    workspaceFolders = { vim.fn.getcwd() },
  }, function(ierr, result)
    if gen ~= generation or (ierr and ierr.code == transport.GONE) then
      return -- it exited first: on_exit says so
    end
    if not ierr then
      server = result
      initialized = true
      probing = false
      settle(a, nil)
    else
      a.error = ierr
      if not (only_if_running and ierr.code == M.codes.no_daemon) then
        -- agentd refuses and exits (its forwarder does, at once); the exit
        -- tells the failure, with its code and stderr. One that stays is
        -- ended, so the next command starts afresh.
        local c2 = client
        vim.defer_fn(function()
          if c2 and not c2.is_closing() and gen == generation then
            c2.terminate()
          end
        end, 2000)
      else
        settle(a, ierr)
      end
    end
    handlers.started(result, ierr)
  end)
  return true
end

---Sends a request; cb(err, result) runs on the main loop. err is a table
---{code, message, data} (agentd's, or the plugin's own when agentd is missing).
---@param method string
---@param params table|nil
---@param cb fun(err: table|nil, result: any)|nil
function M.request(method, params, cb)
  cb = cb or function() end
  local ok, err = M.ensure()
  if not ok then
    vim.schedule(function()
      cb({ code = -1, message = err })
    end)
    return
  end
  local sent = client.request(method, params or vim.empty_dict(), function(rerr, result)
    cb(rerr, result)
  end)
  if not sent then
    vim.schedule(function()
      cb({ code = -1, message = "agentd: the connection is closed" })
    end)
  end
end

---A request that waits for its answer (at most timeout ms).
---@return table|nil err, any result
function M.request_sync(method, params, timeout)
  local done, rerr, res = false, nil, nil
  M.request(method, params, function(e, r)
    done, rerr, res = true, e, r
  end)
  if not vim.wait(timeout or 5000, function()
    return done
  end, 10) then
    return { code = -2, message = ("agentd: %s got no answer in %d ms"):format(method, timeout or 5000) }
  end
  return rerr, res
end

function M.notify(method, params)
  if M.running() then
    client.notify(method, params or vim.empty_dict())
  end
end

---Marks the coming end of the connection as asked for (the daemon is being
---stopped), or not any more.
---@param yes boolean
function M.expect_exit(yes)
  stopping = yes
end

---Closes this Neovim's connection: shutdown, then exit. In private mode agentd
---ends every agent's process group; otherwise the daemon keeps them running.
---Waits at most timeout ms; agentd also exits by itself when its stdin closes.
function M.stop(timeout)
  if not M.running() then
    return
  end
  timeout = timeout or config.get().shutdown_timeout
  stopping = true
  local c = client
  local done = false
  c.request(protocol.methods.shutdown, vim.empty_dict(), function()
    done = true
  end)
  vim.wait(timeout, function()
    return done
  end, 10)
  c.notify(protocol.methods.exit, vim.empty_dict())
  vim.wait(math.min(timeout, 1000), function()
    return c.is_closing()
  end, 10)
  if not c.is_closing() then
    c.terminate()
  end
end

return M

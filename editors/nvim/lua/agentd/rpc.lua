-- The connection to `agentd --stdio`: one process per Neovim instance,
-- JSON-RPC with Content-Length framing through vim.lsp.rpc. By default that
-- process forwards to agentd's per-user daemon, which owns the sessions;
-- with config private it is agentd itself.
local config = require("agentd.config")

local M = {}

---@class agentd.Handlers
---@field notification fun(method: string, params: table)
---@field starting fun()
---@field started fun(info: table|nil, err: table|nil)
---@field exited fun(code: integer, signal: integer, expected: boolean)

---@type agentd.Handlers
local handlers = {
  notification = function() end,
  starting = function() end,
  started = function() end,
  exited = function() end,
}

local client = nil ---@type vim.lsp.rpc.PublicClient|nil
local generation = 0 -- bumped on every start, so a late exit of an old process is ignored
local stopping = false
local server = nil -- initialize result
local probing = false -- the client was started with no_start and has not initialized yet

M.PROTOCOL_VERSION = 1

M.codes = {
  parse_error = -32700,
  shutting_down = -32000,
  no_session = -32010,
  session_exited = -32011,
  spawn_failed = -32012,
  input_backlog = -32013,
  auth_required = -32014,
  blocked = -32020,
  sessions_running = -32040,
  incompatible = -32041,
  no_daemon = -32042,
  stale_prompt = -32021,
  no_option = -32022,
  not_answerable = -32024,
  already_answered = -32025,
  not_supported = -32030,
}

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
  local argv, err = config.command(c)
  if not argv then
    return nil, err
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
  return argv
end

---Starts agentd unless it runs; returns true, or false and why not.
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
  if not argv then
    return false, err
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
  local ok, started = pcall(vim.lsp.rpc.start, argv, {
    notification = function(method, params)
      if gen == generation then
        handlers.notification(method, params or {})
      end
    end,
    server_request = function(method)
      return nil, vim.lsp.rpc.rpc_response_error(-32601, "agentd.nvim does not serve " .. method)
    end,
    on_exit = function(code, signal)
      vim.schedule(function()
        if gen ~= generation then
          return
        end
        local expected = stopping or (only_if_running and not initialized)
        client, server = nil, nil
        probing = false
        handlers.exited(code, signal, expected)
      end)
    end,
    on_error = function() end,
  }, { env = c.env })
  if not ok then
    return false, "agentd: could not start " .. argv[1] .. ": " .. tostring(started)
  end
  client = started
  local version = vim.version()
  client.request("initialize", {
    clientInfo = { name = "agentd.nvim", version = ("%d.%d.%d"):format(version.major, version.minor, version.patch) },
    capabilities = vim.empty_dict(), -- {} would be encoded as [], which agentd refuses
    workspaceFolders = { vim.fn.getcwd() },
  }, function(ierr, result)
    if gen ~= generation then
      return
    end
    if not ierr then
      server = result
      initialized = true
      probing = false
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
  c.request("shutdown", vim.empty_dict(), function()
    done = true
  end)
  vim.wait(timeout, function()
    return done
  end, 10)
  c.notify("exit", vim.empty_dict())
  vim.wait(math.min(timeout, 1000), function()
    return c.is_closing()
  end, 10)
  if not c.is_closing() then
    c.terminate()
  end
end

return M

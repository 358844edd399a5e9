-- JSON-RPC 2.0 over a child process's stdin/stdout with LSP base-protocol
-- framing (Content-Length headers): what `agentd --stdio` speaks.
--
-- vim.lsp.rpc.start speaks it too, but keeps the child's stderr to itself
-- (it goes to the LSP log) and never answers a request whose reply did not
-- come before the child exited. When agentd cannot start, its stderr is the
-- only place that says why, and a caller waiting on a reply must hear that
-- the reply will never come. This client keeps the last lines of stderr
-- (and still copies them to the LSP log, as before) and fails every pending
-- request when the child exits.
--
-- Every callback (notification, reply, exit) runs on the main loop, in the
-- order the bytes arrived: editor API calls are safe in them.
local M = {}

-- The code of the error a pending request gets when the child exited first.
M.GONE = -3

local HEAD, TAIL = 20, 40 -- stderr lines kept: the first HEAD and the last TAIL

---@class agentd.StderrTail
---@field head string[]
---@field tail string[]
---@field dropped integer lines between head and tail that were let go
---@field partial string

local function new_tail()
  return { head = {}, tail = {}, dropped = 0, partial = "" }
end

local function add_line(t, line)
  line = line:gsub("\r$", "")
  if #t.head < HEAD then
    table.insert(t.head, line)
    return
  end
  table.insert(t.tail, line)
  if #t.tail > TAIL then
    table.remove(t.tail, 1)
    t.dropped = t.dropped + 1
  end
end

local function feed(t, chunk)
  local text = t.partial .. chunk
  local from = 1
  while true do
    local nl = text:find("\n", from, true)
    if not nl then
      break
    end
    add_line(t, text:sub(from, nl - 1))
    from = nl + 1
  end
  t.partial = text:sub(from)
  if #t.partial > 4096 then -- a line without an end: keep what fits
    add_line(t, t.partial)
    t.partial = ""
  end
end

---The stderr lines kept (the first ones, "…" where lines were let go, the
---last ones), the unfinished last line included.
---@param t agentd.StderrTail
---@return string[]
function M.lines(t)
  local out = vim.list_extend({}, t.head)
  if t.dropped > 0 then
    table.insert(out, ("… (%d lines)"):format(t.dropped))
  end
  vim.list_extend(out, t.tail)
  if t.partial ~= "" then
    table.insert(out, t.partial)
  end
  return out
end

---What of stderr tells why a program failed: the lines before its usage
---text (a Go program's "flag provided but not defined: -x" comes first, then
---pages of usage), else all of them; blank lines dropped; the last max
---(default 6), each at most 240 characters.
---@param lines string[]
---@param max integer|nil
---@return string[]
function M.excerpt(lines, max)
  max = max or 6
  local kept = {}
  for _, l in ipairs(lines) do
    if #kept > 0 and l:match("^%s*[Uu]sage[%s:]") then
      break
    end
    if vim.trim(l) ~= "" then
      table.insert(kept, #l > 240 and (l:sub(1, 239) .. "…") or l)
    end
  end
  if #kept > max then
    kept = vim.list_slice(kept, #kept - max + 1)
  end
  return kept
end

local function frame(msg)
  local body = vim.json.encode(msg)
  return ("Content-Length: %d\r\n\r\n%s"):format(#body, body)
end

---@class agentd.Transport
---@field request fun(method: string, params: table, cb: fun(err: table|nil, result: any)): boolean, integer|nil
---@field notify fun(method: string, params: table): boolean
---@field is_closing fun(): boolean
---@field terminate fun()
---@field stderr fun(): string[] the stderr lines kept so far
---@field pid integer|nil

---@class agentd.TransportOpts
---@field env table|nil added to the child's environment
---@field on_notification fun(method: string, params: table|nil)
---@field on_request fun(method: string, params: table|nil): any, table|nil result, or nil and an error {code, message}
---@field on_exit fun(code: integer, signal: integer)

---Starts argv and speaks JSON-RPC with it; returns the client, or nil and
---why the program could not be started (not found, not executable).
---@param argv string[]
---@param opts agentd.TransportOpts
---@return agentd.Transport|nil client, string|nil err
function M.start(argv, opts)
  local pending = {} ---@type table<integer, fun(err: table|nil, result: any)>
  local next_id = 0
  local exited = false
  local stderr = new_tail()
  local proc ---@type vim.SystemObj
  local lsplog = (function()
    local ok, log = pcall(require, "vim.lsp.log")
    return ok and log or nil
  end)()

  local function write(msg)
    if exited or not proc then
      return false
    end
    return (pcall(proc.write, proc, frame(msg)))
  end

  local function dispatch(msg)
    if type(msg) ~= "table" then
      return
    end
    if msg.method then
      if msg.id ~= nil then
        local result, err = nil, { code = -32601, message = "agentd.nvim does not serve " .. tostring(msg.method) }
        if opts.on_request then
          result, err = opts.on_request(msg.method, msg.params)
        end
        if err then
          write({ jsonrpc = "2.0", id = msg.id, error = err })
        else
          write({ jsonrpc = "2.0", id = msg.id, result = result == nil and vim.NIL or result })
        end
      else
        opts.on_notification(msg.method, msg.params)
      end
    elseif msg.id ~= nil then
      local cb = pending[msg.id]
      pending[msg.id] = nil
      if cb then
        cb(msg.error, msg.result)
      end
    end
  end

  -- The bytes from stdout: headers, then a body of Content-Length bytes.
  local buf = ""
  local function on_stdout(_, chunk)
    if not chunk then
      return
    end
    buf = buf .. chunk
    while true do
      local hs, he = buf:find("\r\n\r\n", 1, true)
      if not hs then
        return
      end
      local len = tonumber(buf:sub(1, hs - 1):match("[Cc]ontent%-[Ll]ength:%s*(%d+)"))
      if not len then
        -- Not a header: skip to after the blank line and read on.
        if lsplog then
          pcall(lsplog.error, "agentd.nvim", argv[1], "bad header", buf:sub(1, hs - 1))
        end
        buf = buf:sub(he + 1)
      else
        if #buf < he + len then
          return
        end
        local body = buf:sub(he + 1, he + len)
        buf = buf:sub(he + len + 1)
        vim.schedule(function()
          local ok, msg = pcall(vim.json.decode, body, { luanil = { object = true } })
          if ok then
            dispatch(msg)
          elseif lsplog then
            pcall(lsplog.error, "agentd.nvim", argv[1], "bad message", body:sub(1, 200))
          end
        end)
      end
    end
  end

  local function on_stderr(_, chunk)
    if not chunk then
      return
    end
    feed(stderr, chunk)
    -- Where vim.lsp.rpc put it: the LSP log, at ERROR.
    if lsplog then
      pcall(lsplog.error, "rpc", argv[1], "stderr", chunk)
    end
  end

  local ok, started = pcall(vim.system, argv, {
    stdin = true,
    stdout = on_stdout,
    stderr = on_stderr,
    env = opts.env,
    -- Out of Neovim's process group, as vim.lsp.rpc starts servers: a
    -- Ctrl-C in a terminal does not reach it.
    detach = true,
  }, function(obj)
    -- vim.system calls this once stdout and stderr are drained: every
    -- reply read is scheduled before it.
    vim.schedule(function()
      exited = true
      local ids = vim.tbl_keys(pending)
      table.sort(ids)
      local how = (obj.signal and obj.signal ~= 0) and ("signal " .. obj.signal) or ("exit code " .. tostring(obj.code))
      for _, id in ipairs(ids) do
        local cb = pending[id]
        pending[id] = nil
        cb({ code = M.GONE, message = ("agentd exited (%s) before it answered"):format(how) }, nil)
      end
      opts.on_exit(obj.code, obj.signal)
    end)
  end)
  if not ok then
    return nil, tostring(started)
  end
  proc = started

  ---@type agentd.Transport
  local client = { pid = proc.pid }
  function client.request(method, params, cb)
    if exited then
      return false
    end
    next_id = next_id + 1
    local id = next_id
    pending[id] = cb
    if not write({ jsonrpc = "2.0", id = id, method = method, params = params }) then
      pending[id] = nil
      return false
    end
    return true, id
  end
  function client.notify(method, params)
    return write({ jsonrpc = "2.0", method = method, params = params })
  end
  function client.is_closing()
    return exited or proc:is_closing()
  end
  function client.terminate()
    if not exited then
      pcall(proc.kill, proc, 15)
    end
  end
  function client.stderr()
    return M.lines(stderr)
  end
  return client
end

return M

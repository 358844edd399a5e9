-- :checkhealth agentd — Neovim version, the binary, its version, a protocol
-- handshake with a fresh `agentd --stdio --private` (which starts no
-- daemon), and the connection to the daemon.
local config = require("agentd.config")

local M = {}

M.PROTOCOL_VERSION = require("agentd.rpc").PROTOCOL_VERSION

local function frame(msg)
  local body = vim.json.encode(msg)
  return ("Content-Length: %d\r\n\r\n%s"):format(#body, body)
end

---Splits Content-Length framed output into decoded messages.
function M.unframe(data)
  local out, pos = {}, 1
  while true do
    local hs, he, len = data:find("Content%-Length: (%d+)\r\n[^\r]*\r?\n?\r\n", pos)
    if not hs then
      break
    end
    len = tonumber(len)
    local body = data:sub(he + 1, he + len)
    local ok, msg = pcall(vim.json.decode, body)
    if ok then
      table.insert(out, msg)
    end
    pos = he + len + 1
  end
  return out
end

local function lines_of(text)
  return vim.split(text or "", "\n", { trimempty = true })
end

---Runs argv with stdin (nil: none) and waits at most timeout ms.
---@return vim.SystemCompleted|nil res, agentd.StartFailure|nil failure
local function run(argv, stdin, timeout)
  local ok, proc = pcall(vim.system, argv, { stdin = stdin or false, text = false })
  if not ok then
    return nil, { argv = argv, reason = tostring(proc) }
  end
  local res = proc:wait(timeout)
  if res.code == 124 or (res.signal == 15 and res.code ~= 0) then
    return nil, { argv = argv, code = res.code, signal = res.signal, stderr = lines_of(res.stderr), note = ("it did not finish in %d ms"):format(timeout) }
  end
  return res
end

---Runs `agentd --stdio --private` (the configured cmd before --stdio),
---sends initialize, shutdown and exit on its stdin.
---@param base string[] the command line before --stdio
---@return table|nil initialize result, string|nil err
function M.handshake(base, timeout)
  local rpc = require("agentd.rpc")
  if type(base) == "string" then
    base = { base }
  end
  local input = frame({ jsonrpc = "2.0", id = 1, method = "initialize", params = { clientInfo = { name = "agentd.nvim checkhealth" } } })
    .. frame({ jsonrpc = "2.0", id = 2, method = "shutdown" })
    .. frame({ jsonrpc = "2.0", method = "exit" })
  local argv = vim.list_extend(vim.deepcopy(base), { "--stdio", "--private", "--log", "/dev/null" })
  local res, failure = run(argv, input, timeout or 5000)
  if not res then
    failure.hint = false
    return nil, rpc.describe_failure(failure)
  end
  local refused
  for _, msg in ipairs(M.unframe(res.stdout or "")) do
    if msg.id == 1 then
      if not msg.error then
        return msg.result
      end
      refused = msg.error
    end
  end
  return nil,
    rpc.describe_failure({ argv = argv, code = res.code, signal = res.signal, stderr = lines_of(res.stderr), error = refused, hint = false })
end

---Runs the configured command's `version`; returns its line, or nil and the
---same message a failed start gives.
---@param base string[] the command line before --stdio
---@return string|nil version, string|nil err
function M.version(base)
  local rpc = require("agentd.rpc")
  local argv = vim.list_extend(vim.deepcopy(base), { "version" })
  local res, failure = run(argv, nil, 5000)
  if not res then
    failure.hint = false
    return nil, rpc.describe_failure(failure, ("`%s` failed"):format(rpc.cmdline(argv)))
  end
  local line = vim.trim(res.stdout or "")
  if res.code == 0 and line:match("^agentd ") then
    return line
  end
  local what = res.code ~= 0 and ("it " .. rpc.how_it_ended(res.code, res.signal))
    or ("it printed %q, not agentd's version"):format(line:sub(1, 80))
  return nil,
    rpc.describe_failure(
      { argv = argv, code = res.code, signal = res.signal, stderr = lines_of(res.stderr), hint = false },
      ("`%s` failed: %s"):format(rpc.cmdline(argv), what)
    )
end

function M.check()
  local h = vim.health
  h.start("agentd: Neovim")
  local v = vim.version()
  local vs = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    h.ok("Neovim " .. vs)
  else
    h.error("Neovim " .. vs .. " is too old", { "agentd.nvim needs Neovim 0.10 or newer" })
  end

  h.start("agentd: binary")
  local c = config.get()
  for _, note in ipairs(config.notes or {}) do
    h.warn(note)
  end
  local base, err, unresolved = config.command(c)
  if not base then
    h.error(
      ("%s\ncommand: %s"):format(err, require("agentd.rpc").cmdline(vim.list_extend(unresolved or {}, { "--stdio" }))),
      { "Build it: go build -o ~/.local/bin/agentd ./cmd/agentd", "or set cmd in require('agentd').setup()" }
    )
    return
  end
  local bin = base[1]
  h.ok("found: " .. bin)
  local line, verr = M.version(base)
  if line then
    h.ok("version: " .. line)
  else
    h.error(verr, { "cmd in require('agentd').setup() is agentd and what comes before --stdio, e.g. cmd = { \"" .. bin .. "\" }" })
  end

  h.start("agentd: protocol")
  local result, herr = M.handshake(base)
  if not result then
    h.error("handshake with `agentd --stdio` failed: " .. herr, { "Run it by hand: " .. require("agentd.rpc").cmdline(base) .. " --stdio --verbose" })
  elseif result.protocolVersion ~= M.PROTOCOL_VERSION then
    h.error(
      ("agentd speaks protocol %s, this plugin %d"):format(tostring(result.protocolVersion), M.PROTOCOL_VERSION),
      { "Update agentd or the plugin so they match" }
    )
  else
    local agents = {}
    for _, a in ipairs(result.agents or {}) do
      table.insert(agents, a.name)
    end
    h.ok(
      ("handshake: %s %s, protocol %d"):format(
        result.serverInfo and result.serverInfo.name or "?",
        result.serverInfo and result.serverInfo.version or "?",
        result.protocolVersion
      )
    )
    h.info("agents with rules: " .. table.concat(agents, ", "))
  end

  h.start("agentd: this Neovim")
  local rpc = require("agentd.rpc")
  local log = config.log_path(c)
  local srv = rpc.server()
  if rpc.running() and srv then
    local n = #require("agentd.sessions").list(require("agentd.sessions").live)
    local d = srv.daemon or {}
    if d.private then
      h.ok(("agentd is running for this Neovim alone (pid %s, private), %d live session(s)"):format(tostring(d.pid or rpc.pid() or "?"), n))
    else
      h.ok(("connected to agentd's daemon (pid %s, socket %s), %d live session(s)"):format(tostring(d.pid or "?"), d.socket or "?", n))
    end
    for _, w in ipairs(srv.warnings or {}) do
      h.warn(w)
    end
  else
    h.info("not connected; the first :Agentd command connects to agentd's daemon, starting it if none runs")
  end
  h.info("log: " .. log .. (vim.uv.fs_stat(log) and "" or " (not written yet)"))
end

return M

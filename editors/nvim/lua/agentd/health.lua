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

---Runs `agentd --stdio --private`, sends initialize, shutdown and exit on its stdin.
---@return table|nil initialize result, string|nil err
function M.handshake(bin, timeout)
  local input = frame({ jsonrpc = "2.0", id = 1, method = "initialize", params = { clientInfo = { name = "agentd.nvim checkhealth" } } })
    .. frame({ jsonrpc = "2.0", id = 2, method = "shutdown" })
    .. frame({ jsonrpc = "2.0", method = "exit" })
  local ok, proc = pcall(vim.system, { bin, "--stdio", "--private", "--log", "/dev/null" }, { stdin = input, text = false })
  if not ok then
    return nil, tostring(proc)
  end
  local res = proc:wait(timeout or 5000)
  if res.signal == 9 or res.signal == 15 then
    return nil, ("no answer in %d ms"):format(timeout or 5000)
  end
  for _, msg in ipairs(M.unframe(res.stdout or "")) do
    if msg.id == 1 then
      if msg.error then
        return nil, ("initialize failed: %s"):format(msg.error.message or vim.inspect(msg.error))
      end
      return msg.result
    end
  end
  return nil,
    ("no initialize answer (exit %s); stdout %q, stderr %q"):format(
      tostring(res.code),
      (res.stdout or ""):sub(1, 200),
      (res.stderr or ""):sub(1, 200)
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
  local bin, err = config.binary(c)
  if not bin then
    h.error(err, { "Build it: go build -o ~/.local/bin/agentd ./cmd/agentd", "or set cmd in require('agentd').setup()" })
    return
  end
  h.ok("found: " .. bin)
  local ver = vim.system({ bin, "version" }, { text = true }):wait(3000)
  local line = vim.trim(ver.stdout or "")
  if ver.code == 0 and line:match("^agentd ") then
    h.ok("version: " .. line)
  else
    h.error(("`%s version` failed (exit %s): %s"):format(bin, tostring(ver.code), vim.trim(ver.stderr or "")))
  end

  h.start("agentd: protocol")
  local result, herr = M.handshake(bin)
  if not result then
    h.error("handshake with `agentd --stdio` failed: " .. herr, { "Run it by hand: " .. bin .. " --stdio --verbose" })
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

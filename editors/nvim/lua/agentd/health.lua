-- :checkhealth agentd — Neovim version, the binary, its version, a protocol
-- handshake with a fresh `agentd --stdio --private` (which starts no
-- daemon), and the connection to the daemon.
local protocol = require("agentd.protocol")
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

---Runs `agentd --stdio` (the configured cmd before --stdio) with extra
---flags (default --private: a fresh agentd of its own, no daemon), sends
---initialize, shutdown and exit on its stdin.
---@param base string[] the command line before --stdio
---@param extra string[]|nil flags after --stdio
---@return table|nil initialize result, string|nil err, table|nil refusal (initialize's error)
function M.handshake(base, timeout, extra)
  local rpc = require("agentd.rpc")
  if type(base) == "string" then
    base = { base }
  end
  local input = frame({ jsonrpc = "2.0", id = 1, method = protocol.methods.initialize, params = { clientInfo = { name = "agentd.nvim checkhealth" } } })
    .. frame({ jsonrpc = "2.0", id = 2, method = protocol.methods.shutdown })
    .. frame({ jsonrpc = "2.0", method = protocol.methods.exit })
  local argv = vim.list_extend(vim.deepcopy(base), { "--stdio" })
  vim.list_extend(argv, extra or { "--private" })
  vim.list_extend(argv, { "--log", "/dev/null" })
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
    rpc.describe_failure({ argv = argv, code = res.code, signal = res.signal, stderr = lines_of(res.stderr), error = refused, hint = false }),
    refused
end

---The configured command's `version --json`, decoded: {version, commit,
---protocol, os, arch, go}; nil and why when it does not run or prints no
---JSON (an agentd older than `version --json`: then its `version` line).
---@return table|nil info, string|nil err, string|nil line
function M.version_info(base)
  local argv = vim.list_extend(vim.deepcopy(base), { "version", "--json" })
  local res = run(argv, nil, 5000)
  if res and res.code == 0 then
    local ok, v = pcall(vim.json.decode, vim.trim(res.stdout or ""))
    if ok and type(v) == "table" and v.version then
      return v
    end
  end
  local line, err = M.version(base)
  return nil, err, line
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

---Where the binary came from, for the report.
local function origin(c, bin)
  local install = require("agentd.install")
  if c.cmd ~= nil then
    return "cmd in setup()"
  end
  if bin == install.bin() then
    local info = install.info()
    if info and info.source == "go" then
      return ("installed by :Agentd install, built with Go from %s"):format(info.from or "?")
    elseif info and info.source == "release" then
      return ("installed by :Agentd install from %s"):format(info.from or "?")
    end
    return "installed by :Agentd install"
  end
  return "on $PATH"
end

local function version_line(v)
  local line = ("agentd %s (protocol %s, %s/%s, %s)"):format(v.version, tostring(v.protocol), v.os or "?", v.arch or "?", v.go or "?")
  if v.commit and v.commit ~= "" then
    line = line .. ", commit " .. v.commit:sub(1, 12)
  end
  return line
end

---The daemon's section: the daemon this Neovim is connected to, else the
---one a `--stdio --no-start` handshake finds (it starts none); its version
---against the binary's, and what to do when they differ.
local function check_daemon(h, c, base, binv)
  local rpc = require("agentd.rpc")
  local srv = rpc.running() and rpc.server() or nil
  local d, warnings
  if srv then
    d, warnings = srv.daemon or {}, srv.warnings or {}
    local n = #require("agentd.sessions").list(require("agentd.sessions").live)
    if d.private then
      h.ok(("agentd is running for this Neovim alone (pid %s, private), %d live session(s)"):format(tostring(d.pid or rpc.pid() or "?"), n))
    else
      h.ok(("connected to agentd's daemon (pid %s, socket %s), %d live session(s)"):format(tostring(d.pid or "?"), d.socket or "?", n))
    end
  elseif c.private then
    h.info("not connected; private = true: the first :Agentd command starts agentd for this Neovim alone, from " .. base[1])
    return
  else
    local extra = { "--no-start" }
    if c.socket then
      vim.list_extend(extra, { "--socket", vim.fn.fnamemodify(c.socket, ":p") })
    end
    local result, err, refused = M.handshake(base, 5000, extra)
    if refused and refused.code == rpc.codes.no_daemon then
      h.info(
        ("not connected, and no agentd daemon is running; the first :Agentd command starts one from %s%s"):format(
          base[1],
          binv and (" (agentd " .. binv.version .. ")") or ""
        )
      )
      return
    end
    if not result then
      h.error("could not ask the running daemon: " .. (err or "?"), {
        "A daemon of another protocol refuses this agentd: once its sessions have ended, `agentd stop` (or :Agentd stop), and the next :Agentd command starts "
          .. base[1],
      })
      return
    end
    d, warnings = result.daemon or {}, result.warnings or {}
    h.info(("not connected; agentd's daemon runs (pid %s, socket %s)"):format(tostring(d.pid or "?"), d.socket or "?"))
  end
  if not d.version then
    return
  end
  if not binv then
    h.info("daemon: agentd " .. d.version)
    return
  end
  if d.version == binv.version then
    h.ok(("daemon: agentd %s, the same version as %s"):format(d.version, base[1]))
    return
  end
  local advice
  if d.private then
    advice = { "Quit and restart Neovim (or :Agentd stop, then any :Agentd command) to run " .. base[1] }
  else
    advice = {
      ("If agentd %s is the newer, `%s upgrade` hands the running agents to it without ending them (the next :Agentd command that starts agentd does it on its own; a daemon never hands over to an older build)"):format(
        binv.version,
        base[1]
      ),
      ("Otherwise the daemon (pid %s) keeps serving its agents; to run agentd %s: once they have ended, `agentd stop` (or :Agentd stop); the next :Agentd command starts the daemon from %s"):format(
        tostring(d.pid or "?"),
        binv.version,
        base[1]
      ),
      "`agentd stop --force` (:Agentd stop!) does it now, and ends every running agent",
    }
  end
  h.warn(
    ("versions differ: the daemon (pid %s) runs agentd %s, %s is agentd %s"):format(tostring(d.pid or "?"), d.version, base[1], binv.version),
    advice
  )
  -- agentd's own words for the same difference are not said twice.
  for _, w in ipairs(warnings or {}) do
    if not w:find("is version", 1, true) then
      h.warn(w)
    end
  end
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
    h.error(("%s\ncommand: %s"):format(err, require("agentd.rpc").cmdline(vim.list_extend(unresolved or {}, { "--stdio" }))), {
      ":Agentd install builds agentd with Go (when Go is on $PATH), or takes the release tarball for this platform (install.from: a release URL or folder)",
      "or set cmd in require('agentd').setup()",
    })
    return
  end
  local bin = base[1]
  h.ok(("found: %s (%s)"):format(bin, origin(c, bin)))
  local binv, verr, line = M.version_info(base)
  if binv then
    h.ok("version: " .. version_line(binv))
    if binv.protocol ~= M.PROTOCOL_VERSION then
      h.error(
        ("%s speaks protocol %s, this plugin %d"):format(bin, tostring(binv.protocol), M.PROTOCOL_VERSION),
        { c.cmd == nil and ":Agentd install puts the agentd of this plugin's version in place" or "Update agentd or the plugin so they match" }
      )
    end
  elseif line then
    h.warn("version: " .. line .. " (an agentd without `version --json`: older than this plugin)", {
      ":Agentd install puts a newer one in place",
    })
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

  h.start("agentd: daemon")
  check_daemon(h, c, base, binv)
  local log = config.log_path(c)
  h.info("log: " .. log .. (vim.uv.fs_stat(log) and "" or " (not written yet)"))
end

return M

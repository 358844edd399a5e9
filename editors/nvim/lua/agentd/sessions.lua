-- What the plugin knows about each session: the last state agentd reported.
-- agentd is the only source of truth; this is a mirror kept in wire order.
local M = {}

M.STATES = { "blocked", "error", "done", "working", "idle", "exited" }

---@class agentd.Session
---@field id string
---@field name string
---@field agent string
---@field argv string[]
---@field cwd string
---@field pid integer
---@field cols integer
---@field rows integer
---@field state string
---@field outcome string|nil
---@field stateSource string|nil
---@field reason string|nil
---@field since string|nil
---@field prompt table|nil
---@field exit table|nil
---@field seq integer order of creation
---@field host string|nil another machine's name ([[hosts]]); nil: this machine
---@field key string the session's key here: its id on this machine, "HOST:id" on another

-- Sessions by key: "s1" on this machine, "a:s1" on host a (ids repeat
-- across hosts; a host's name has no ":").
local by_id = {} ---@type table<string, agentd.Session>
local seq = 0

-- This machine's name in listings, set when other hosts are configured
-- (agentd.hosts): then every label names its host.
M.local_host = nil ---@type string|nil

---The key of session id on host (nil: this machine).
---@param host string|nil
---@param id string
function M.key_of(host, id)
  if host then
    return host .. ":" .. id
  end
  return id
end

---The key of a session (its id on this machine).
function M.key(s)
  return s.key or M.key_of(s.host, s.id)
end

---host, id of a key ("a:s1" → "a", "s1"; "s1" → nil, "s1").
function M.split(key)
  local host, id = key:match("^([^:]+):(.+)$")
  if host then
    return host, id
  end
  return nil, key
end

---Forgets the sessions of one host (nil: this machine's).
---@param host string|nil
function M.reset(host)
  for key, s in pairs(by_id) do
    if s.host == host then
      by_id[key] = nil
    end
  end
end

---Forgets every host's sessions.
function M.reset_all()
  by_id = {}
end

---A comparable key for agentd's RFC 3339 timestamps (which drop trailing
---zeros of the fraction, so plain string order is wrong).
function M.since_key(since)
  if type(since) ~= "string" or since == "" then
    return ""
  end
  local base, frac = since:match("^([%d%-]+T[%d:]+)%.?(%d*)Z$")
  if not base then
    return since
  end
  return base .. "." .. (frac .. "000000000"):sub(1, 9)
end

local function get_or_new(id, host)
  local key = M.key_of(host, id)
  local s = by_id[key]
  if not s then
    seq = seq + 1
    s = { id = id, name = id, agent = "", state = "working", seq = seq, host = host, key = key }
    by_id[key] = s
  end
  return s
end

local function newer_or_same(s, since)
  return M.since_key(since) >= M.since_key(s.since)
end

---Takes a Session object (from session/spawn or session/list).
---@return agentd.Session
---@param host string|nil
function M.upsert(obj, host)
  local s = get_or_new(obj.sessionId, host)
  s.name = obj.name or s.name
  s.agent = obj.agent or s.agent
  s.argv = obj.argv or s.argv
  s.cwd = obj.cwd or s.cwd
  s.pid = obj.pid or s.pid
  s.cols = obj.cols or s.cols
  s.rows = obj.rows or s.rows
  s.agentInfo = obj.agentInfo or s.agentInfo
  s.loginSessionId = obj.loginSessionId or s.loginSessionId
  if obj.exit then
    s.exit = obj.exit
  end
  -- A state notification may have overtaken this snapshot on the wire.
  if s.state == "exited" and obj.state ~= "exited" then
    return s
  end
  if not s.since or newer_or_same(s, obj.since) then
    s.state = obj.state or s.state
    s.outcome = obj.outcome
    s.stateSource = obj.stateSource
    s.reason = obj.reason
    s.since = obj.since
    s.prompt = obj.prompt
    s.message = obj.message
  end
  return s
end

---Takes a session/state notification.
---@return agentd.Session session, string|nil previous state (nil when ignored as stale)
function M.apply(n, host)
  local s = get_or_new(n.sessionId, host)
  if s.state == "exited" and n.state ~= "exited" then
    return s, nil
  end
  if s.since and not newer_or_same(s, n.since) then
    return s, nil
  end
  local previous = s.state
  s.agent = n.agent or s.agent
  s.state = n.state
  s.outcome = n.outcome
  s.stateSource = n.stateSource
  s.reason = n.reason
  s.since = n.since
  s.prompt = n.prompt
  s.message = n.message
  return s, previous
end

---Takes a session/exited notification.
function M.exited(n, host)
  local s = get_or_new(n.sessionId, host)
  s.exit = { exitCode = n.exitCode, signal = n.signal }
  s.state = "exited"
  s.prompt = nil
  return s
end

---Marks every session of this machine (or of host) exited (agentd itself is gone).
function M.all_exited(reason, host)
  for _, s in pairs(by_id) do
    if s.host == host and s.state ~= "exited" then
      s.state, s.prompt, s.reason, s.stateSource = "exited", nil, reason, "process"
    end
  end
end

---Replaces this machine's sessions (or host's) with a session/list result.
function M.replace(list, host)
  local seen = {}
  for _, obj in ipairs(list or {}) do
    seen[M.key_of(host, obj.sessionId)] = true
    M.upsert(obj, host)
  end
  for key, s in pairs(by_id) do
    if s.host == host and not seen[key] then
      by_id[key] = nil
    end
  end
end

---A session by key ("s1" on this machine, "a:s1" on host a).
---@return agentd.Session|nil
function M.get(key)
  return by_id[key]
end

---A session by key ("s1", "a:s1"), by name ("demo") or by host and name
---("a:demo"); nil if none or the name is ambiguous (two hosts' "demo").
---@return agentd.Session|nil
function M.find(key)
  if not key or key == "" then
    return nil
  end
  if by_id[key] then
    return by_id[key]
  end
  local host, name = M.split(key)
  if host and M.local_host and host == M.local_host then
    host = nil
    if by_id[name] then
      return by_id[name]
    end
  elseif not host then
    name = nil
  end
  local found
  for _, s in pairs(by_id) do
    if (name and s.host == host and s.name == name) or (not name and s.name == key) then
      if found then
        return nil
      end
      found = s
    end
  end
  return found
end

---Sessions in creation order, optionally filtered.
---@param filter (fun(s: agentd.Session): boolean)|nil
---@return agentd.Session[]
function M.list(filter)
  local out = {}
  for _, s in pairs(by_id) do
    if not filter or filter(s) then
      table.insert(out, s)
    end
  end
  table.sort(out, function(a, b)
    return a.seq < b.seq
  end)
  return out
end

function M.live(s)
  return s.state ~= "exited"
end

---@return table<string, integer>
function M.counts()
  local c = {}
  for _, name in ipairs(M.STATES) do
    c[name] = 0
  end
  for _, s in pairs(by_id) do
    c[s.state] = (c[s.state] or 0) + 1
  end
  return c
end

---How a session is named to a person: "s1 Demo agent".
---With other hosts configured, its host first: "a: s1 Demo agent".
function M.label(s)
  local l = s.id
  if s.name and s.name ~= "" and s.name ~= s.id then
    l = s.id .. " " .. s.name
  end
  local host = s.host or M.local_host
  if host then
    return host .. ": " .. l
  end
  return l
end

---Whether a session is this machine's.
function M.is_local(s)
  return s.host == nil
end

return M

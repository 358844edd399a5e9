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

local by_id = {} ---@type table<string, agentd.Session>
local seq = 0

function M.reset()
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

local function get_or_new(id)
  local s = by_id[id]
  if not s then
    seq = seq + 1
    s = { id = id, name = id, agent = "", state = "working", seq = seq }
    by_id[id] = s
  end
  return s
end

local function newer_or_same(s, since)
  return M.since_key(since) >= M.since_key(s.since)
end

---Takes a Session object (from session/spawn or session/list).
---@return agentd.Session
function M.upsert(obj)
  local s = get_or_new(obj.sessionId)
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
function M.apply(n)
  local s = get_or_new(n.sessionId)
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
function M.exited(n)
  local s = get_or_new(n.sessionId)
  s.exit = { exitCode = n.exitCode, signal = n.signal }
  s.state = "exited"
  s.prompt = nil
  return s
end

---Marks every session exited (agentd itself is gone).
function M.all_exited(reason)
  for _, s in pairs(by_id) do
    if s.state ~= "exited" then
      s.state, s.prompt, s.reason, s.stateSource = "exited", nil, reason, "process"
    end
  end
end

---Replaces the whole mirror with a session/list result.
function M.replace(list)
  local seen = {}
  for _, obj in ipairs(list or {}) do
    seen[obj.sessionId] = true
    M.upsert(obj)
  end
  for id in pairs(by_id) do
    if not seen[id] then
      by_id[id] = nil
    end
  end
end

---@return agentd.Session|nil
function M.get(id)
  return by_id[id]
end

---A session by id ("s1") or by name; nil if none or the name is ambiguous.
---@return agentd.Session|nil
function M.find(key)
  if not key or key == "" then
    return nil
  end
  if by_id[key] then
    return by_id[key]
  end
  local found
  for _, s in pairs(by_id) do
    if s.name == key then
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
function M.label(s)
  if s.name and s.name ~= "" and s.name ~= s.id then
    return s.id .. " " .. s.name
  end
  return s.id
end

return M

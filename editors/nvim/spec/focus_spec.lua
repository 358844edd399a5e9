-- client/focus: FocusGained and FocusLost (what a terminal with focus
-- reporting sends Neovim) tell agentd whether the person is looking at this
-- Neovim; agentd raises desktop notices only while no client is focused.
-- What agentd was told is read back from its own log.
local H = require("helpers")

local function focus_lines()
  local f = io.open(require("agentd.config").log_path(), "r")
  if not f then
    return {}
  end
  local out = {}
  for line in f:lines() do
    if line:find('msg="client focus"', 1, true) then
      table.insert(out, line)
    end
  end
  f:close()
  return out
end

local function wait_lines(n, pattern)
  local lines
  H.wait(10000, function()
    lines = focus_lines()
    return #lines >= n
  end, function()
    return ("agentd's log has %d client focus line(s), want %d:\n%s"):format(#lines, n, table.concat(lines, "\n"))
  end)
  assert.matches(pattern, lines[n])
  return lines
end

local function connect()
  local rpc = require("agentd.rpc")
  assert(rpc.ensure())
  H.wait(10000, function()
    return rpc.server() ~= nil
  end, function()
    return "agentd never answered initialize"
  end)
end

describe("client/focus", function()
  after_each(function()
    H.stop_all()
  end)

  it("is told on connecting, then on FocusLost and FocusGained, once per change", function()
    H.fresh()
    local before = #focus_lines()
    connect()
    wait_lines(before + 1, "focused=true desktopNotifications=true")
    vim.api.nvim_exec_autocmds("FocusLost", {})
    wait_lines(before + 2, "focused=false desktopNotifications=true")
    vim.api.nvim_exec_autocmds("FocusLost", {}) -- no change: nothing sent
    vim.api.nvim_exec_autocmds("FocusGained", {})
    local lines = wait_lines(before + 3, "focused=true desktopNotifications=true")
    assert.are.equal(before + 3, #lines, table.concat(lines, "\n"))
  end)

  it("carries desktop_notifications = false", function()
    H.fresh({ desktop_notifications = false })
    local before = #focus_lines()
    connect()
    wait_lines(before + 1, "focused=true desktopNotifications=false")
  end)
end)

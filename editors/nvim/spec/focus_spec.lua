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

-- The real way focus reaches Neovim: a Neovim in tmux with focus-events on,
-- and a tmux client attached (tmux tells a pane of focus only when a client
-- shows it; `script` gives that client a terminal). Splitting the window
-- moves the focus to the new pane, selecting Neovim's pane brings it back.
describe("client/focus from a real terminal (tmux focus-events)", function()
  local sock, attached

  local function sh(argv)
    local res = vim.system(argv, { text = true }):wait(30000)
    return res.stdout or "", res.code, res.stderr or ""
  end

  local function tmux(...)
    local out, code, err = sh({ "tmux", "-S", sock, ... })
    assert(code == 0, "tmux " .. table.concat({ ... }, " ") .. ": " .. err)
    return out
  end

  after_each(function()
    if attached then
      attached:kill(9)
      attached = nil
    end
    sh({ "tmux", "-S", sock, "kill-server" })
    H.stop_all()
  end)

  it("FocusLost when another pane takes the focus, FocusGained when it comes back", function()
    H.fresh()
    assert(vim.fn.executable("tmux") == 1, "tmux is needed (ci.sh installs it)")
    assert(vim.fn.executable("script") == 1, "script (util-linux) is needed")
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir, "p")
    sock = dir .. "/tmux.sock"
    local init = dir .. "/init.lua"
    local f = assert(io.open(init, "w"))
    f:write(([[
vim.opt.rtp:prepend(%q)
vim.cmd.runtime("plugin/agentd.lua")
require("agentd").setup({ cmd = %q })
require("agentd.rpc").ensure()
]]):format(H.root, H.bin()))
    f:close()
    local before = #focus_lines()
    tmux("new-session", "-d", "-s", "t", "-x", "100", "-y", "30",
      "-e", "AGENTD_SOCKET=" .. H.socket(), "-e", "XDG_STATE_HOME=" .. vim.env.XDG_STATE_HOME,
      vim.v.progpath .. " -u " .. init .. " -i NONE -n")
    tmux("set", "-g", "focus-events", "on")
    attached = vim.system({ "script", "-qfc", "tmux -S " .. sock .. " attach -t t", "/dev/null" }, { stdin = true })
    H.wait(10000, function()
      return (sh({ "tmux", "-S", sock, "list-clients" })):find("attached") ~= nil
    end, function()
      return "no tmux client attached"
    end)
    -- The tmux Neovim connected and said it is focused.
    local lines = wait_lines(before + 1, "focused=true")
    local client = lines[before + 1]:match("client=(%d+)")
    assert(client, lines[before + 1])

    tmux("split-window", "-t", "t")
    lines = wait_lines(before + 2, "client=" .. client .. " focused=false")
    tmux("select-pane", "-t", "t.0")
    wait_lines(before + 3, "client=" .. client .. " focused=true")
  end)
end)

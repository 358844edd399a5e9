-- Options for require('agentd').setup(), their defaults and their checks.
local M = {}

---@class agentd.Config
M.defaults = {
  -- The agentd binary: a name on $PATH, a path, or a list (binary and the
  -- arguments that come before --stdio). nil: the one :Agentd install put
  -- under stdpath("data")/agentd/bin, else agentd on $PATH.
  cmd = nil,
  -- Extra arguments after --stdio, e.g. { "--verbose" }.
  args = {},
  -- Sessions live in agentd's per-user daemon, shared with every editor and
  -- the agentd CLI, and outlive this Neovim. private = true runs agentd for
  -- this Neovim alone (--stdio --private): its agents end when Neovim quits.
  private = false,
  -- The daemon's socket (--socket); nil: $AGENTD_SOCKET, else
  -- $XDG_RUNTIME_DIR/agentd/agentd.sock.
  socket = nil,
  -- When Neovim starts, connect to the daemon if one runs (starting none),
  -- so the statusline counts agents started elsewhere before any command.
  autoconnect = true,
  -- agentd's log file (--log); nil: agentd's default, $XDG_STATE_HOME/agentd/agentd.log.
  log = nil,
  -- :Agentd install (and lazy.nvim's build): builds agentd with Go when Go
  -- is on $PATH and the plugin is inside an agentd checkout; otherwise takes
  -- the release tarball for this platform from `from`, a release URL or a
  -- local folder (what `make dist` writes: tarballs and SHA256SUMS), and
  -- checks it against SHA256SUMS. go = false: always the release.
  install = {
    from = nil, -- nil: https://github.com/agentd/agentd/releases/latest/download
    go = true,
  },
  -- attention cooldown passed as --cooldown (e.g. "30s"); nil: agentd's default.
  cooldown = nil,
  -- Environment added to agentd's (and so to every agent's).
  env = nil,
  -- How long VimLeavePre waits for agentd to say goodbye (ms); in private
  -- mode, for it to end its agents.
  shutdown_timeout = 3000,
  -- Agents for `:Agentd new NAME`: NAME = argv (a list or a string split on
  -- spaces) or { argv = {...}, agent = "manifest", env = {...}, name = "..." }.
  -- Names agentd has rules for (claude, codex, gemini, …) and `demo` (the
  -- agent bundled with agentd) work without an entry.
  agents = {},
  -- `:Agentd new` without a name: this agent, or nil to choose from a list.
  default_agent = nil,
  -- The screen size of a new session until a window shows it.
  cols = 120,
  rows = 40,
  -- Open the terminal of a session `:Agentd new` started.
  open_on_new = true,
  terminal = {
    -- Where :Agentd open shows a session: "vsplit", "split", "tab", "current" or "float".
    split = "vsplit",
    -- Enter terminal mode when the window opens.
    startinsert = false,
  },
  send = {
    -- Press Enter after the text :Agentd send typed.
    submit = true,
  },
  -- The floating notice when a session becomes blocked (attention).
  notice = {
    enabled = true,
    border = "rounded",
    max_width = 64,
    -- Rows of what the prompt approves shown at most (a diff, a multi-line
    -- command); d in the notice, or :Agentd show, opens all of it.
    detail_rows = 12,
    -- Close it by itself after this many ms (0: stays until dismissed or answered).
    timeout = 0,
  },
  -- Let agentd raise a desktop notification (the OS's) when an agent turns
  -- blocked, done or error while no editor is focused. false: none while
  -- this Neovim is connected. Focus comes from FocusGained/FocusLost (in
  -- tmux: set -g focus-events on).
  desktop_notifications = true,
  -- vim.notify when a turn ends (done) or the agent reports an error.
  notify = {
    done = true,
    error = true,
  },
  statusline = {
    -- States counted, in this order; exited sessions are left out by default.
    states = { "blocked", "error", "done", "working", "idle" },
    icons = { blocked = "●", error = "✗", done = "✓", working = "◐", idle = "○", exited = "·" },
    -- Show the state's name after the count ("● 1 blocked" rather than "● 1").
    labels = true,
    separator = " ",
    -- Text before the counts, shown only when there are sessions.
    prefix = "",
  },
}

local SPLITS = { vsplit = true, split = true, tab = true, current = true, float = true }

local function check(path, value, want, optional)
  if value == nil and optional then
    return
  end
  local kinds = type(want) == "table" and want or { want }
  for _, k in ipairs(kinds) do
    if type(value) == k then
      return
    end
  end
  error(
    ("agentd.setup: option %s: expected %s, got %s"):format(path, table.concat(kinds, " or "), vim.inspect(value)),
    0
  )
end

local function show(v)
  return vim.inspect(v, { newline = " ", indent = "" })
end

---cmd is agentd and what comes before --stdio; the plugin adds --stdio
---itself. A cmd that has it (the whole command line, as a person would
---type it) is taken apart: what came before --stdio stays cmd, what came
---after goes before args (--private sets private). Returns a note that
---shows the right form, or nil when cmd had no --stdio.
---@param c agentd.Config
---@return string|nil note
local function split_stdio(c)
  local words = c.cmd
  if words == nil then
    return nil
  end
  if type(words) == "string" then
    if not (words:find("%s%-%-?stdio%s") or words:find("%s%-%-?stdio$")) then
      return nil
    end
    words = vim.split(vim.trim(words), "%s+")
  end
  local at
  for i, w in ipairs(words) do
    if w == "--stdio" or w == "-stdio" then
      at = i
      break
    end
  end
  if not at then
    return nil
  end
  if at == 1 then
    error(("agentd.setup: option cmd: %s starts with --stdio; name the agentd binary first, e.g. cmd = { %q }"):format(show(c.cmd), "/path/to/agentd"), 0)
  end
  local before, after = vim.list_slice(words, 1, at - 1), vim.list_slice(words, at + 1)
  local args = {}
  for _, w in ipairs(after) do
    if w == "--private" then
      c.private = true
    else
      table.insert(args, w)
    end
  end
  local old = c.cmd
  c.cmd = #before == 1 and before[1] or before
  c.args = vim.list_extend(args, c.args)
  local right = "cmd = " .. show(c.cmd)
  if #args > 0 then
    right = right .. ", args = " .. show(c.args)
  end
  if c.private and vim.tbl_contains(after, "--private") then
    right = right .. ", private = true"
  end
  return ("agentd: option cmd %s has --stdio, which the plugin adds itself: write %s (it runs that way now)"):format(
    show(old),
    right
  )
end

---Merges opts over the defaults; a wrong option is an error naming it.
---The second result: notes on options taken in another form than written.
---@param opts table|nil
---@return agentd.Config, string[]
function M.build(opts)
  opts = opts or {}
  check("opts", opts, "table")
  local c = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- Lists replace rather than merge.
  if opts.statusline and opts.statusline.states then
    c.statusline.states = opts.statusline.states
  end
  if opts.args then
    c.args = opts.args
  end
  check("cmd", c.cmd, { "string", "table" }, true)
  if type(c.cmd) == "table" then
    for i, w in ipairs(c.cmd) do
      check(("cmd[%d]"):format(i), w, "string")
    end
  end
  check("args", c.args, "table")
  local notes = {}
  local note = split_stdio(c)
  if note then
    table.insert(notes, note)
  end
  check("private", c.private, "boolean")
  check("socket", c.socket, "string", true)
  check("autoconnect", c.autoconnect, "boolean")
  check("log", c.log, "string", true)
  check("cooldown", c.cooldown, "string", true)
  check("env", c.env, "table", true)
  check("shutdown_timeout", c.shutdown_timeout, "number")
  check("install", c.install, "table")
  check("install.from", c.install.from, "string", true)
  check("install.go", c.install.go, "boolean")
  check("agents", c.agents, "table")
  check("default_agent", c.default_agent, "string", true)
  check("cols", c.cols, "number")
  check("rows", c.rows, "number")
  check("open_on_new", c.open_on_new, "boolean")
  check("terminal.split", c.terminal.split, "string")
  if not SPLITS[c.terminal.split] then
    error(
      ("agentd.setup: option terminal.split: %q is not one of vsplit, split, tab, current, float"):format(
        c.terminal.split
      ),
      0
    )
  end
  check("terminal.startinsert", c.terminal.startinsert, "boolean")
  check("send.submit", c.send.submit, "boolean")
  check("notice.enabled", c.notice.enabled, "boolean")
  check("notice.timeout", c.notice.timeout, "number")
  check("notice.detail_rows", c.notice.detail_rows, "number")
  check("desktop_notifications", c.desktop_notifications, "boolean")
  check("notify.done", c.notify.done, "boolean")
  check("notify.error", c.notify.error, "boolean")
  check("statusline.states", c.statusline.states, "table")
  check("statusline.icons", c.statusline.icons, "table")
  for name, spec in pairs(c.agents) do
    check("agents." .. name, spec, { "string", "table" })
  end
  return c, notes
end

---The configuration in force: what setup() was given, or the defaults.
---@type agentd.Config
M.current = nil

---Notes on the options setup() was given (see M.build), for :checkhealth.
---@type string[]
M.notes = {}

function M.get()
  if not M.current then
    M.current = M.build({})
  end
  return M.current
end

---The agentd command line: binary (resolved on $PATH) and its arguments.
---When the binary cannot be run: nil, why, and the command line unresolved.
---@return string[]|nil argv, string|nil err, string[]|nil base
function M.command(c)
  c = c or M.get()
  if c.cmd == nil then
    -- Not set: the binary :Agentd install put in place, else $PATH's.
    local installed = require("agentd.install").bin()
    if vim.fn.executable(installed) == 1 then
      return { installed }
    end
    if vim.fn.exepath("agentd") == "" then
      return nil,
        ("agentd: agentd was not found: not installed (%s) and not on $PATH; run :Agentd install, or set cmd in require('agentd').setup()"):format(
          installed
        ),
        { "agentd" }
    end
    return { vim.fn.exepath("agentd") }
  end
  local base = type(c.cmd) == "table" and vim.deepcopy(c.cmd) or { c.cmd }
  if #base == 0 or type(base[1]) ~= "string" or base[1] == "" then
    return nil, "agentd: option cmd is empty; set it to the agentd binary", {}
  end
  local exe = vim.fn.exepath(base[1])
  if exe == "" then
    local why = "was not found"
    local st = vim.uv.fs_stat(vim.fn.expand(base[1]))
    if st and st.type == "directory" then
      why = "is a folder, not a program"
    elseif st then
      why = "is not executable"
    end
    return nil,
      ("agentd: %q %s; install agentd or set cmd in require('agentd').setup()"):format(base[1], why),
      base
  end
  base[1] = exe
  return base
end

---The agentd binary, or nil and why not.
function M.binary(c)
  local argv, err = M.command(c)
  return argv and argv[1], err
end

---Where agentd writes its log.
function M.log_path(c)
  c = c or M.get()
  if c.log then
    return vim.fn.fnamemodify(c.log, ":p")
  end
  local state = vim.env.XDG_STATE_HOME
  if not state or state == "" then
    state = (vim.env.HOME or "~") .. "/.local/state"
  end
  return state .. "/agentd/agentd.log"
end

return M

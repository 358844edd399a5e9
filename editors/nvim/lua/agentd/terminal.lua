-- A session's screen in a terminal buffer: nvim_open_term fed by
-- session/output, keystrokes back with session/input, the session resized
-- to the window (the smallest one showing it, as Neovim's terminal does).
local protocol = require("agentd.protocol")
local config = require("agentd.config")
local sessions = require("agentd.sessions")

local M = {}

-- A request about the session keyed id, to its host's connection.
local function request(id, method, params, cb)
  require("agentd.hosts").request(id, method, params, cb)
end

---@class agentd.Term
---@field id string the session's key ("s1", "a:s1")
---@field host string|nil
---@field buf integer
---@field chan integer
---@field size string|nil last "colsxrows" sent

local terms = {} ---@type table<string, agentd.Term>
local group = nil

local function windows_of(buf)
  local wins = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == buf then
      table.insert(wins, w)
    end
  end
  return wins
end

local function text_size(win)
  local info = vim.fn.getwininfo(win)[1]
  return math.max(info.width - info.textoff, 2), math.max(info.height, 2)
end

---Tells agentd the size of the smallest window showing the session.
function M.resize(id)
  local t = terms[id]
  if not t or not vim.api.nvim_buf_is_valid(t.buf) then
    return
  end
  local cols, rows
  for _, w in ipairs(windows_of(t.buf)) do
    local wc, wr = text_size(w)
    cols = cols and math.min(cols, wc) or wc
    rows = rows and math.min(rows, wr) or wr
  end
  if not cols then
    return
  end
  local size = cols .. "x" .. rows
  if size == t.size then
    return
  end
  t.size = size
  request(id, protocol.methods.resize, { cols = cols, rows = rows })
end

local function resize_all()
  for id in pairs(terms) do
    M.resize(id)
  end
end

local function ensure_autocmds()
  if group then
    return
  end
  group = vim.api.nvim_create_augroup("agentd.terminal", { clear = true })
  vim.api.nvim_create_autocmd({ "WinResized", "VimResized", "BufWinEnter", "TabEnter" }, {
    group = group,
    callback = resize_all,
  })
  vim.api.nvim_create_autocmd("WinClosed", {
    group = group,
    callback = function()
      vim.schedule(resize_all)
    end,
  })
end

local function set_window_options(win)
  local wo = vim.wo[win]
  wo.number, wo.relativenumber, wo.signcolumn, wo.foldcolumn, wo.spell = false, false, "no", "0", false
end

local function show(buf)
  local split = config.get().terminal.split
  if split == "current" then
    vim.api.nvim_win_set_buf(0, buf)
  elseif split == "float" then
    local w = math.floor(vim.o.columns * 0.85)
    local h = math.floor((vim.o.lines - 2) * 0.85)
    vim.api.nvim_open_win(buf, true, {
      relative = "editor",
      width = w,
      height = h,
      row = math.floor((vim.o.lines - 2 - h) / 2),
      col = math.floor((vim.o.columns - w) / 2),
      border = "rounded",
      style = "minimal",
    })
  elseif split == "tab" then
    vim.cmd("tab sbuffer " .. buf)
  elseif split == "split" then
    vim.cmd("belowright sbuffer " .. buf)
  else
    vim.cmd("vertical belowright sbuffer " .. buf)
  end
  set_window_options(vim.api.nvim_get_current_win())
end

---What the module holds for a session's terminal (for the specs'
---diagnostics): {buf, chan, closed, size} or nil.
function M._term(id)
  return terms[id]
end

---The terminal buffer of a session, or nil.
function M.buffer(id)
  local t = terms[id]
  return t and vim.api.nvim_buf_is_valid(t.buf) and t.buf or nil
end

---Opens a window on a new empty buffer, as config.terminal.split says, for
---a session about to start: it can start at the size it will be shown at.
---@return integer buf, integer cols, integer rows
function M.new_window()
  local buf = vim.api.nvim_create_buf(true, false)
  vim.bo[buf].bufhidden = "hide"
  show(buf)
  local cols, rows = text_size(vim.api.nvim_get_current_win())
  return buf, cols, rows
end

---Makes buf (empty, shown) the terminal of session s.
function M.attach(s, buf)
  ensure_autocmds()
  local id = sessions.key(s)
  local name = ("agentd://%s/%s"):format(id, s.name or s.agent or "")
  if not pcall(vim.api.nvim_buf_set_name, buf, name) then
    pcall(vim.api.nvim_buf_set_name, buf, name .. " #" .. buf) -- an old agentd's s1 is still open
  end
  local chan = vim.api.nvim_open_term(buf, {
    on_input = function(_, _, _, data)
      request(id, protocol.methods.input, { data = data })
    end,
  })
  vim.bo[buf].filetype = "agentd"
  local t = { id = id, host = s.host, buf = buf, chan = chan }
  terms[id] = t
  vim.b[buf].agentd_session = id
  vim.api.nvim_create_autocmd("BufWipeout", {
    group = group,
    buffer = buf,
    callback = function()
      if terms[id] and terms[id].buf == buf then
        terms[id] = nil
        if require("agentd.hosts").running(t.host) and (sessions.get(id) or {}).state ~= "exited" then
          request(id, protocol.methods.subscribe, { output = false })
        end
      end
    end,
  })
  M.resize(id)
  if s.state == "exited" then
    M.exited(s)
  else
    request(id, protocol.methods.subscribe, { output = true })
  end
  if config.get().terminal.startinsert and s.state ~= "exited" and vim.api.nvim_get_current_buf() == buf then
    vim.cmd.startinsert()
  end
  return t
end

---Shows a session in a terminal window (reusing its buffer) and marks it seen.
---An ACP session has no screen: its login's terminal while it logs in,
---else a notice of where its requests and tasks go.
---@param s agentd.Session
function M.open(s)
  if type(s.agentInfo) == "table" then
    local login = type(s.loginSessionId) == "string" and sessions.get(sessions.key_of(s.host, s.loginSessionId))
    if login then
      return M.open(login)
    end
    vim.notify(
      ("agentd: %s runs over ACP and has no terminal: :Agentd answer takes its requests, :Agentd send gives it a task"):format(sessions.label(s)),
      vim.log.levels.INFO
    )
    return nil
  end
  ensure_autocmds()
  local t = terms[sessions.key(s)]
  if t and vim.api.nvim_buf_is_valid(t.buf) then
    local wins = windows_of(t.buf)
    if #wins > 0 then
      vim.api.nvim_set_current_win(wins[1])
    else
      show(t.buf)
    end
    if config.get().terminal.startinsert and s.state ~= "exited" then
      vim.cmd.startinsert()
    end
  else
    t = M.attach(s, (M.new_window()))
  end
  if s.state == "done" then
    request(sessions.key(s), protocol.methods.seen, {})
  end
  return t.buf
end

---Feeds a session/output notification to its terminal.
function M.output(params)
  local t = terms[params.sessionId]
  if t and vim.api.nvim_buf_is_valid(t.buf) and params.data then
    vim.api.nvim_chan_send(t.chan, params.data)
  end
end

---Writes a closing line into the terminal of a session that exited.
---@param s agentd.Session
---@param why string|nil how it ended, when the session cannot say
function M.exited(s, why)
  local t = terms[sessions.key(s)]
  if not (t and vim.api.nvim_buf_is_valid(t.buf)) or t.closed then
    return
  end
  t.closed = true
  local how = s.exit and (s.exit.signal or ("code " .. tostring(s.exit.exitCode))) or why or "agentd is gone"
  -- Leave the agent's alternate screen and colours; write below what it left.
  vim.api.nvim_chan_send(t.chan, ("\27[?1049l\27[0m\27[999;1H\r\n[agentd: %s exited, %s]"):format(s.id, how))
end

---A session that ended while the connection was lost: its terminal gets
---its closing line and is let go.
function M.gone(id, why)
  M.exited(sessions.get(id) or { id = id }, why)
  terms[id] = nil
end

---After a lost connection is made again: every terminal still held
---subscribes anew, and its repaint shows the session's screen as it is now.
---Only the terminals of host's sessions (nil: this machine's).
---@param host string|nil
function M.reattach(host)
  for id, t in pairs(terms) do
    if t.host == host and vim.api.nvim_buf_is_valid(t.buf) and not t.closed then
      t.size = nil
      M.resize(id)
      request(id, protocol.methods.subscribe, { output = true })
    end
  end
end

---Lets go of every terminal, each with a closing line; the buffers stay.
---why "disconnected": this Neovim let go and the agents run on in the
---daemon (:Agentd open shows them again). Otherwise agentd is gone (why
---says how, if given), and a new one numbers its sessions from s1 again.
function M.detach_all(why)
  for id, t in pairs(terms) do
    -- Another host's terminal: its own connection is not this one.
    if not t.host then
      local s = sessions.get(id) or { id = id }
      if why == "disconnected" and s.state ~= "exited" and vim.api.nvim_buf_is_valid(t.buf) and not t.closed then
        t.closed = true
        vim.api.nvim_chan_send(t.chan, ("\27[?1049l\27[0m\27[999;1H\r\n[agentd: disconnected; %s runs on in agentd's daemon: :Agentd open %s]"):format(id, id))
      else
        M.exited(s, why ~= "disconnected" and why or nil)
      end
      terms[id] = nil
    end
  end
end

return M

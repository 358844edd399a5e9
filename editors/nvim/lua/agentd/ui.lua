-- What a person sees and answers: the prompt picker, the floating notice
-- for a blocked session, the notifications, the session list.
local config = require("agentd.config")
local rpc = require("agentd.rpc")
local sessions = require("agentd.sessions")
local statusline = require("agentd.statusline")

local M = {}

---The question, with what an ACP permission is about when the question does
---not say it already ("Allow?" twice reads the same; the command or the path
---tells them apart).
---@return string
function M.prompt_text(p)
  local q = p.question or ""
  local tool = type(p.tool) == "table" and p.tool or {}
  local input = tool.input
  if type(input) ~= "string" or input == "" or q:find(input, 1, true) then
    return q ~= "" and q or "(a prompt)"
  end
  local kind = (tool.kind and tool.kind ~= "" and tool.kind ~= "other") and (tool.kind .. ": ") or ""
  if q == "" then
    return kind .. input
  end
  return ("%s (%s%s)"):format(q, kind, input)
end

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "agentd" })
end
M.notify = notify

---Calls cb(session) with one session among those filter keeps: the only
---one, or the one the person picks. key (an id or a name) names it directly.
---@param key string|nil
---@param filter fun(s: agentd.Session): boolean
---@param what string what the session is chosen for, e.g. "Answer"
---@param cb fun(s: agentd.Session)
function M.pick(key, filter, what, cb)
  if key and key ~= "" then
    local s = sessions.find(key)
    if not s then
      notify(("agentd: no session %q (:Agentd list shows them)"):format(key), vim.log.levels.WARN)
      return
    end
    return cb(s)
  end
  local list = sessions.list(filter)
  if #list == 0 then
    notify("agentd: no session to " .. what:lower(), vim.log.levels.WARN)
    return
  end
  if #list == 1 then
    return cb(list[1])
  end
  vim.ui.select(list, {
    prompt = what .. " which session?",
    kind = "agentd.session",
    format_item = function(s)
      return ("%s [%s]"):format(sessions.label(s), s.state)
    end,
  }, function(s)
    if s then
      cb(s)
    end
  end)
end

-- An option as the notice lists it: "1. Yes", its key first (the notice's
-- keys 1-9 answer with it).
local function option_text(o)
  local text = o.id .. ". " .. (o.label or "")
  if o.description and o.description ~= "" then
    text = text .. " — " .. o.description
  end
  return text
end

-- An option in the answer menu, which numbers its items itself ("1: "):
-- the label alone, so it reads "1: Yes" and not "1: 1. Yes". An option whose
-- id is not its place in the list keeps the id, after the label.
local function menu_text(o, place)
  local text = (o.label and o.label ~= "") and o.label or tostring(o.id)
  if tostring(o.id) ~= tostring(place) and text ~= tostring(o.id) then
    text = ("%s (%s)"):format(text, o.id)
  end
  if o.description and o.description ~= "" then
    text = text .. " — " .. o.description
  end
  return text
end

---Asks the person to answer a session's prompt (vim.ui.select over the
---options, vim.ui.input for free text where the prompt takes it) and sends
---runtime_answer. cb(err, result) when done; (nil, nil) when cancelled.
---@param s agentd.Session
---@param prompt table|nil the prompt to answer (default: the session's)
---@param cb fun(err: table|nil, result: table|nil)|nil
function M.answer(s, prompt, cb)
  cb = cb or function() end
  prompt = prompt or s.prompt
  if not prompt then
    notify(("agentd: %s is not waiting on a prompt (%s)"):format(sessions.label(s), s.state), vim.log.levels.WARN)
    return cb(nil, nil)
  end
  local items = {}
  for i, o in ipairs(prompt.options or {}) do
    table.insert(items, { option = o, place = i })
  end
  if prompt.freeform then
    table.insert(items, { freeform = true })
  end
  if not prompt.options or #prompt.options == 0 then
    -- agentd sees a prompt it cannot read for sure: nothing to pick, so
    -- the person types an answer or answers in the terminal.
    table.insert(items, { terminal = true })
  end
  local question = M.prompt_text(prompt)
  if question == "" then
    question = "Answer"
  end
  vim.ui.select(items, {
    prompt = ("%s: %s"):format(sessions.label(s), question),
    kind = "agentd.prompt",
    format_item = function(item)
      if item.freeform then
        return "Type an answer…"
      end
      if item.terminal then
        return "Open the terminal"
      end
      return menu_text(item.option, item.place)
    end,
  }, function(item)
    if not item then
      return cb(nil, nil)
    end
    if item.terminal then
      require("agentd.terminal").open(s)
      return cb(nil, nil)
    end
    if item.freeform then
      vim.ui.input({ prompt = question .. " " }, function(text)
        if not text or text == "" then
          return cb(nil, nil)
        end
        M.send_answer(s, prompt, { text = text }, cb)
      end)
    else
      M.send_answer(s, prompt, { optionId = item.option.id }, cb)
    end
  end)
end

---Sends runtime_answer for prompt with choice ({optionId} or {text}).
function M.send_answer(s, prompt, choice, cb)
  cb = cb or function() end
  local params = { sessionId = s.id, promptId = prompt.promptId, optionId = choice.optionId, text = choice.text }
  rpc.request("runtime_answer", params, function(err, result)
    if err then
      if err.code == rpc.codes.stale_prompt then
        local now = err.data and err.data ~= vim.NIL and err.data.prompt
        if now and now ~= vim.NIL then
          notify(("agentd: %s shows another prompt now; choose again"):format(sessions.label(s)), vim.log.levels.WARN)
          return M.answer(s, now, cb)
        end
        notify(("agentd: %s: the prompt is no longer on screen"):format(sessions.label(s)), vim.log.levels.WARN)
      elseif err.code == rpc.codes.already_answered then
        notify(("agentd: %s: that prompt was already answered"):format(sessions.label(s)), vim.log.levels.WARN)
      else
        notify(("agentd: answering %s failed: %s"):format(sessions.label(s), err.message or vim.inspect(err)), vim.log.levels.ERROR)
      end
      return cb(err, nil)
    end
    M.close_notice(s.id)
    cb(nil, result)
  end)
end

-- The floating notice: one at a time, the others wait their turn.
local notice = { win = nil, buf = nil, id = nil, promptId = nil }
local queue = {} ---@type string[]
local ns = vim.api.nvim_create_namespace("agentd.notice")

local function wrap(text, width)
  local lines, line = {}, ""
  for word in text:gmatch("%S+") do
    if line ~= "" and vim.fn.strdisplaywidth(line .. " " .. word) > width then
      table.insert(lines, line)
      line = word
    else
      line = line == "" and word or line .. " " .. word
    end
  end
  if line ~= "" then
    table.insert(lines, line)
  end
  return lines
end

local function truncate(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  return vim.fn.strcharpart(text, 0, width - 1) .. "…"
end

local function notice_lines(s, width)
  local p = s.prompt or {}
  local lines, marks = {}, {}
  local function add(text, group)
    table.insert(lines, " " .. text)
    if group then
      table.insert(marks, { #lines - 1, group })
    end
  end
  add(truncate(sessions.label(s) .. " needs you", width), "AgentdNoticeTitle")
  for _, l in ipairs(wrap(M.prompt_text(p), width)) do
    add(l, "AgentdNoticeQuestion")
  end
  for _, o in ipairs(p.options or {}) do
    add(truncate("  " .. option_text(o), width))
  end
  if p.freeform then
    add("  (free text accepted)")
  end
  add(truncate(":Agentd answer · :Agentd dismiss", width), "Comment")
  return lines, marks
end

local function valid_win(w)
  return w and vim.api.nvim_win_is_valid(w)
end

local function render_notice(s)
  local c = config.get().notice
  local width = math.max(20, math.min(c.max_width, vim.o.columns - 6))
  local lines, marks = notice_lines(s, width - 2)
  local w = 0
  for _, l in ipairs(lines) do
    w = math.max(w, vim.fn.strdisplaywidth(l))
  end
  w = w + 1
  if not (notice.buf and vim.api.nvim_buf_is_valid(notice.buf)) then
    notice.buf = vim.api.nvim_create_buf(false, true)
    vim.bo[notice.buf].bufhidden = "wipe"
    vim.bo[notice.buf].filetype = "agentd_notice"
    local buf = notice.buf
    local function map(lhs, fn)
      vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, desc = "agentd notice" })
    end
    map("q", M.dismiss)
    map("<Esc>", M.dismiss)
    map("<CR>", function()
      local ss = notice.id and sessions.get(notice.id)
      if ss then
        M.answer(ss)
      end
    end)
    for i = 1, 9 do
      map(tostring(i), function()
        local ss = notice.id and sessions.get(notice.id)
        if not (ss and ss.prompt) then
          return
        end
        for _, o in ipairs(ss.prompt.options or {}) do
          if o.id == tostring(i) then
            return M.send_answer(ss, ss.prompt, { optionId = o.id })
          end
        end
      end)
    end
  end
  vim.bo[notice.buf].modifiable = true
  vim.api.nvim_buf_set_lines(notice.buf, 0, -1, false, lines)
  vim.bo[notice.buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(notice.buf, ns, 0, -1)
  for _, m in ipairs(marks) do
    vim.api.nvim_buf_set_extmark(notice.buf, ns, m[1], 0, { end_row = m[1] + 1, hl_group = m[2], hl_eol = false })
  end
  local win_cfg = {
    relative = "editor",
    anchor = "NE",
    row = 1,
    col = vim.o.columns - 1,
    width = w,
    height = #lines,
    style = "minimal",
    border = c.border,
    focusable = true,
    zindex = 60,
    title = " agentd ",
    title_pos = "center",
  }
  if valid_win(notice.win) then
    vim.api.nvim_win_set_config(notice.win, win_cfg)
  else
    win_cfg.noautocmd = true
    notice.win = vim.api.nvim_open_win(notice.buf, false, win_cfg)
    vim.wo[notice.win].winhighlight = "Normal:AgentdNotice,NormalFloat:AgentdNotice,FloatBorder:AgentdNoticeBorder"
    vim.wo[notice.win].wrap = false
  end
  notice.id, notice.promptId = s.id, s.prompt and s.prompt.promptId
  if c.timeout and c.timeout > 0 then
    local win, pid = notice.win, notice.promptId
    vim.defer_fn(function()
      if notice.win == win and notice.promptId == pid then
        M.dismiss()
      end
    end, c.timeout)
  end
end

---Shows the notice for a session that became blocked (or queues it).
---@param s agentd.Session
function M.notice(s)
  if not config.get().notice.enabled then
    return
  end
  if valid_win(notice.win) and notice.id ~= s.id then
    if not vim.tbl_contains(queue, s.id) then
      table.insert(queue, s.id)
    end
    return
  end
  render_notice(s)
end

---The notice on screen: {win, buf, session} or nil.
function M.current_notice()
  if valid_win(notice.win) then
    return { win = notice.win, buf = notice.buf, session = notice.id }
  end
end

---Closes the notice and shows the next waiting one, if any still blocked.
function M.dismiss()
  if valid_win(notice.win) then
    vim.api.nvim_win_close(notice.win, true)
  end
  notice.win, notice.buf, notice.id, notice.promptId = nil, nil, nil, nil
  while #queue > 0 do
    local s = sessions.get(table.remove(queue, 1))
    if s and s.state == "blocked" and s.prompt then
      return render_notice(s)
    end
  end
end

---Closes the notice of one session (answered, or no longer blocked).
function M.close_notice(id)
  queue = vim.tbl_filter(function(q)
    return q ~= id
  end, queue)
  if notice.id == id then
    M.dismiss()
  end
end

---Follows a state change: notices and notifications.
---@param s agentd.Session
---@param n table the session/state notification
function M.on_state(s, n)
  local c = config.get()
  if s.state ~= "blocked" then
    M.close_notice(s.id)
  elseif notice.id == s.id and valid_win(notice.win) and s.prompt and s.prompt.promptId ~= notice.promptId then
    render_notice(s) -- the same session asks something else now
  end
  if not n.attention then
    return
  end
  if s.state == "blocked" then
    M.notice(s)
  elseif s.state == "done" and c.notify.done then
    notify(("agentd: %s finished (%s)"):format(sessions.label(s), s.outcome or "unknown"))
  elseif s.state == "error" and c.notify.error then
    local msg = s.message and s.message ~= "" and (": " .. s.message) or ""
    notify(("agentd: %s reports an error (%s)%s"):format(sessions.label(s), s.reason or "?", msg), vim.log.levels.ERROR)
  end
end

---Whether a session works in this Neovim's folder (or below it).
local function here(s, cwd)
  return s.cwd ~= nil and (s.cwd == cwd or vim.startswith(s.cwd, cwd .. "/"))
end

---Echoes the sessions, one a line, coloured by state: the ones in this
---Neovim's folder first, then the daemon's others (started from another
---editor or the CLI), under their folders.
function M.list()
  local cwd = vim.fn.getcwd()
  local mine, others = {}, {}
  for _, s in ipairs(sessions.list()) do
    table.insert(here(s, cwd) and mine or others, s)
  end
  if #mine + #others == 0 then
    vim.api.nvim_echo({ { "agentd: no sessions (:Agentd new starts one)" } }, false, {})
    return
  end
  local chunks = {}
  local function line(s)
    local state = s.state .. (s.outcome and s.state == "done" and (" (" .. s.outcome .. ")") or "")
    table.insert(chunks, { ("%-5s "):format(s.id) })
    table.insert(chunks, { ("%-18s"):format(state), statusline.group(s.state) })
    table.insert(chunks, { " " .. (s.name or "") })
    if s.prompt and s.prompt.question then
      table.insert(chunks, { "  " .. s.prompt.question, "AgentdNoticeQuestion" })
    end
    if s.exit then
      table.insert(
        chunks,
        { ("  exit %s%s"):format(s.exit.exitCode or "?", s.exit.signal and (" " .. s.exit.signal) or ""), "Comment" }
      )
    end
  end
  for _, s in ipairs(mine) do
    if #chunks > 0 then
      table.insert(chunks, { "\n" })
    end
    line(s)
  end
  table.sort(others, function(a, b)
    if (a.cwd or "") ~= (b.cwd or "") then
      return (a.cwd or "") < (b.cwd or "")
    end
    return a.seq < b.seq
  end)
  local folder = nil
  for _, s in ipairs(others) do
    if s.cwd ~= folder then
      folder = s.cwd
      if #chunks > 0 then
        table.insert(chunks, { "\n" })
      end
      table.insert(chunks, { "in " .. vim.fn.fnamemodify(folder or "?", ":~"), "Comment" })
    end
    table.insert(chunks, { "\n  " })
    line(s)
  end
  vim.api.nvim_echo(chunks, false, {})
end

return M

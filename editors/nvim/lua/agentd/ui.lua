-- What a person sees and answers: the prompt picker, the floating notice
-- for a blocked session, the notifications, the session list.
local protocol = require("agentd.protocol")
local config = require("agentd.config")
local rpc = require("agentd.rpc")
local sessions = require("agentd.sessions")
local statusline = require("agentd.statusline")

local M = {}

-- A prompt's subject (what it asks to approve) is untrusted text: an agent,
-- a model or a repository wrote it. agentd strips escapes and control
-- characters already; here it only ever becomes buffer lines (never a
-- command, an expand() or a statusline item), one line where one line is
-- shown, and every control character is dropped before a line is set.

---One line: runs of white space (newlines among them) as one space, control
---characters dropped, cut at max characters with "…".
---@param s any
---@param max integer|nil
---@return string
function M.one_line(s, max)
  local t = tostring(s or ""):gsub("%s+", " "):gsub("%c", "")
  t = vim.trim(t)
  if max and vim.fn.strchars(t) > max then
    t = vim.fn.strcharpart(t, 0, max - 1) .. "…"
  end
  return t
end

---A row for a buffer: tabs as spaces, no other control character (a "\n"
---would make nvim_buf_set_lines fail; the rest would show as ^X).
local function clean_row(s)
  return (tostring(s or ""):gsub("\t", "    "):gsub("%c", ""))
end
M._clean_row = clean_row

---Whether agentd saw a subject but could not read it (kind "other", no text).
function M.unreadable(sub)
  return type(sub) == "table"
    and vim.trim(type(sub.text) == "string" and sub.text or "") == ""
    and vim.trim(type(sub.detail) == "string" and sub.detail or "") == ""
end

local subject_words = {
  command = "command",
  edit = "edit",
  write = "write",
  read = "read",
  fetch = "fetch",
  folder = "folder",
  tool = "tool",
}

---"command: rm -rf build", "edit: NOTES.md", "… (cut)" when agentd could
---not see all of it; says so when it could not read it at all.
---@return string
function M.subject_line(sub, max)
  if M.unreadable(sub) then
    return "agentd could not read what it approves: see the terminal"
  end
  local word = subject_words[sub.kind]
  local text = sub.text ~= "" and sub.text or sub.detail or ""
  return (word and (word .. ": ") or "") .. M.one_line(text, max or 160) .. (sub.truncated and " (cut)" or "")
end

---The question and what it approves, on one line: "Do you want to proceed?
---— command: rm -rf build". A question that names the subject already (an
---ACP permission titled with its command) is left as it is.
---@return string
function M.prompt_text(p)
  local q = M.one_line(p.question, 300)
  local sub = type(p.subject) == "table" and p.subject or nil
  if not sub then
    return q ~= "" and q or "(a prompt)"
  end
  local text = M.one_line(sub.text)
  if not M.unreadable(sub) and not sub.truncated and text ~= "" and q:find(text, 1, true) then
    return q
  end
  local line = M.subject_line(sub)
  return q == "" and line or (q .. " — " .. line)
end

---Whether a subject's detail says more than its one line.
local function has_more(sub)
  local d = type(sub.detail) == "string" and sub.detail or ""
  return vim.trim(d) ~= "" and M.one_line(d) ~= M.one_line(sub.text)
end

---The highlight group of a diff row: "-old", "+new", " context", a line
---number before the marker ("12 -old"), file headers ("--- a", "+++ b",
---"└ path (+1 -0)") and hunk headers ("@@ … @@").
local function diff_group(row)
  if row:match("^@@") then
    return "AgentdNoticeDiffHunk"
  elseif row:match("^%-%-%- ") or row:match("^%+%+%+ ") or row:match("^%s*└ ") then
    return "AgentdNoticeDiffFile"
  end
  local marker = row:match("^([-+])") or row:match("^%s*%d+ ([-+])")
  if marker == "+" then
    return "AgentdNoticeDiffAdd"
  elseif marker == "-" then
    return "AgentdNoticeDiffDelete"
  end
end
M._diff_group = diff_group

---Whether a subject's detail is a change: an edit or write whose rows add
---or remove.
function M.is_diff(sub)
  if type(sub) ~= "table" or (sub.kind ~= "edit" and sub.kind ~= "write") or type(sub.detail) ~= "string" then
    return false
  end
  for row in (sub.detail .. "\n"):gmatch("([^\n]*)\n") do
    local g = diff_group(row)
    if g == "AgentdNoticeDiffAdd" or g == "AgentdNoticeDiffDelete" then
      return true
    end
  end
  return false
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
  local text = M.one_line(o.id, 8) .. ". " .. M.one_line(o.label, 200)
  if o.description and o.description ~= "" then
    text = text .. " — " .. M.one_line(o.description, 200)
  end
  return text
end

-- An option in the answer menu, which numbers its items itself ("1: "):
-- the label alone, so it reads "1: Yes" and not "1: 1. Yes". An option whose
-- id is not its place in the list keeps the id, after the label.
local function menu_text(o, place)
  local text = (o.label and o.label ~= "") and M.one_line(o.label, 200) or tostring(o.id)
  if tostring(o.id) ~= tostring(place) and text ~= tostring(o.id) then
    text = ("%s (%s)"):format(text, o.id)
  end
  if o.description and o.description ~= "" then
    text = text .. " — " .. M.one_line(o.description, 200)
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
  -- The question and what it approves: a person sees what they pick for.
  local question = M.prompt_text(prompt)
  if question == "" then
    question = "Answer"
  end
  vim.ui.select(items, {
    prompt = ("%s: %s"):format(M.one_line(sessions.label(s), 80), question),
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
  -- To the connection of the session's host, and no other.
  local params = { promptId = prompt.promptId, optionId = choice.optionId, text = choice.text }
  require("agentd.hosts").request(sessions.key(s), protocol.methods.answer, params, function(err, result)
    if err then
      if err.code == rpc.codes.prompt_stale then
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
    M.close_notice(sessions.key(s))
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

-- The subject in the notice: its line (wrapped, a few rows at most), then
-- for a change its diff rows with diff highlighting, for a multi-line
-- command its rows; at most notice.detail_rows of them, then how many more.
local function subject_lines(sub, width, add)
  if M.unreadable(sub) then
    for _, l in ipairs(wrap(M.subject_line(sub) .. " (:Agentd open)", width)) do
      add(l, "AgentdNoticeWarn")
    end
    return
  end
  local more = has_more(sub)
  local head = M.subject_line(sub, 400)
  if sub.kind == "command" and more then
    head = "command:" .. (sub.truncated and " (cut)" or "")
  end
  local wrapped = wrap(head, width)
  for i, l in ipairs(wrapped) do
    if i == 3 and #wrapped > 3 then
      add(truncate(l .. " …", width), "AgentdNoticeSubject")
      break
    end
    add(l, "AgentdNoticeSubject")
  end
  if not more then
    return
  end
  local diff = M.is_diff(sub)
  local rows = vim.split(sub.detail:gsub("\n$", ""), "\n", { plain = true })
  local max = config.get().notice.detail_rows
  for i, row in ipairs(rows) do
    if i > max then
      add(("… %d more rows: d shows all"):format(#rows - max), "Comment")
      break
    end
    row = clean_row(row)
    -- Highlighted from the row's own first column, not the notice's margin.
    add(truncate("  " .. row, width), diff and (diff_group(row) or "AgentdNoticeDiffContext") or "AgentdNoticeDetail", 3)
  end
end

local function notice_lines(s, width)
  local p = s.prompt or {}
  local lines, marks = {}, {}
  local function add(text, group, col)
    table.insert(lines, " " .. clean_row(text))
    if group then
      table.insert(marks, { #lines - 1, group, col or 0 })
    end
  end
  add(truncate(M.one_line(sessions.label(s), 80) .. " needs you", width), "AgentdNoticeTitle")
  for _, l in ipairs(wrap(M.one_line(p.question, 300), width)) do
    add(l, "AgentdNoticeQuestion")
  end
  local sub = type(p.subject) == "table" and p.subject or nil
  if sub then
    subject_lines(sub, width, add)
  end
  for _, o in ipairs(p.options or {}) do
    add(truncate("  " .. option_text(o), width))
  end
  if p.freeform then
    add("  (free text accepted)")
  end
  local keys = ":Agentd answer · :Agentd dismiss"
  if sub and has_more(sub) then
    keys = ":Agentd answer · d: " .. (M.is_diff(sub) and "the diff" or "all of it") .. " · :Agentd dismiss"
  end
  add(truncate(keys, width), "Comment")
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
    map("d", function()
      local ss = notice.id and sessions.get(notice.id)
      if ss then
        M.show_subject(ss)
      end
    end)
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
    vim.api.nvim_buf_set_extmark(notice.buf, ns, m[1], math.min(m[3], #lines[m[1] + 1]), { end_row = m[1] + 1, hl_group = m[2], hl_eol = false })
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
  notice.id, notice.promptId = sessions.key(s), s.prompt and s.prompt.promptId
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
  local key = sessions.key(s)
  if valid_win(notice.win) and notice.id ~= key then
    if not vim.tbl_contains(queue, key) then
      table.insert(queue, key)
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

---Opens what a session's prompt approves whole, in a scratch buffer in a
---split below: a change with filetype diff, a command with filetype sh.
---The buffer is read-only and has no modelines; `q` closes it.
---@param s agentd.Session
---@return integer|nil buf
function M.show_subject(s)
  local sub = s.prompt and type(s.prompt.subject) == "table" and s.prompt.subject or nil
  if not sub then
    notify(("agentd: %s is not waiting on a prompt that says what it approves"):format(sessions.label(s)), vim.log.levels.WARN)
    return nil
  end
  if M.unreadable(sub) then
    notify("agentd: " .. M.subject_line(sub) .. " (:Agentd open)", vim.log.levels.WARN)
    return nil
  end
  local body = (type(sub.detail) == "string" and vim.trim(sub.detail) ~= "") and sub.detail or sub.text
  local rows = vim.split(body:gsub("\n$", ""), "\n", { plain = true })
  for i, r in ipairs(rows) do
    rows[i] = clean_row(r)
  end
  local header = { ("# %s: %s"):format(M.one_line(sessions.label(s), 80), M.subject_line(sub, 200)) }
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.bo[buf].modeline = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.list_extend(header, rows))
  vim.bo[buf].modifiable = false
  vim.bo[buf].readonly = true
  vim.bo[buf].filetype = M.is_diff(sub) and "diff" or (sub.kind == "command" and "sh" or "text")
  pcall(vim.api.nvim_buf_set_name, buf, ("agentd://%s/%s"):format(sessions.key(s), M.is_diff(sub) and "diff" or sub.kind))
  vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = buf, nowait = true, desc = "close" })
  local win = vim.api.nvim_open_win(buf, true, { split = "below", win = -1, height = math.min(#rows + 2, math.max(5, math.floor(vim.o.lines / 2))) })
  vim.wo[win].wrap = false
  return buf
end

---Follows a state change: notices and notifications.
---@param s agentd.Session
---@param n table the session/state notification
function M.on_state(s, n)
  local c = config.get()
  if s.state ~= "blocked" then
    M.close_notice(sessions.key(s))
  elseif notice.id == sessions.key(s) and valid_win(notice.win) and s.prompt and s.prompt.promptId ~= notice.promptId then
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
-- With other hosts: each host under a header saying how it is (up, no
-- daemon, down with ssh's words, reconnecting), this machine first.
local function list_hosts(hosts)
  local chunks = {}
  local function line(s)
    local state = s.state .. (s.outcome and s.state == "done" and (" (" .. s.outcome .. ")") or "")
    table.insert(chunks, { "\n  " })
    table.insert(chunks, { ("%-5s "):format(s.id) })
    table.insert(chunks, { ("%-18s"):format(state), statusline.group(s.state) })
    table.insert(chunks, { " " .. M.one_line(s.name or "", 80) })
    if s.prompt and s.prompt.question then
      table.insert(chunks, { "  " .. M.prompt_text(s.prompt), "AgentdNoticeQuestion" })
    end
  end
  local function group(name, host, how)
    if #chunks > 0 then
      table.insert(chunks, { "\n" })
    end
    table.insert(chunks, { M.one_line(name, 60), "Title" })
    table.insert(chunks, { " (" .. M.one_line(how, 300) .. ")", "Comment" })
    local n = 0
    for _, s in ipairs(sessions.list(function(s)
      return s.host == host
    end)) do
      line(s)
      n = n + 1
    end
    if n == 0 then
      table.insert(chunks, { "\n  no sessions", "Comment" })
    end
  end
  group(hosts.local_name(), nil, require("agentd.rpc").server() and "this machine" or "this machine, not connected")
  for _, name in ipairs(hosts.names()) do
    group(name, name, hosts.describe(name))
  end
  vim.api.nvim_echo(chunks, false, {})
end

function M.list()
  local hosts = require("agentd.hosts")
  if hosts.multi() then
    return list_hosts(hosts)
  end
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
      table.insert(chunks, { "  " .. M.prompt_text(s.prompt), "AgentdNoticeQuestion" })
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

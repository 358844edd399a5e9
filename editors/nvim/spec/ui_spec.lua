-- The answer flow with agentd replaced by a stub, for prompts the demo
-- agent does not draw (free text, a prompt that changed).
local H = require("helpers")

describe("answering", function()
  local ui, rpc, sessions, requests, reply
  before_each(function()
    H.fresh()
    ui, rpc, sessions = require("agentd.ui"), require("agentd.rpc"), require("agentd.sessions")
    requests = {}
    reply = function()
      return nil, { state = "working", stateSource = "screen", reason = "x.spinner" }
    end
    rpc.request = function(method, params, cb)
      table.insert(requests, { method = method, params = params })
      local err, res = reply(method, params)
      vim.schedule(function()
        if cb then
          cb(err, res)
        end
      end)
    end
  end)

  local question = {
    promptId = "p1",
    kind = "question",
    question = "Which database?",
    options = { { id = "1", label = "Postgres" }, { id = "2", label = "SQLite" } },
    freeform = true,
  }

  it("offers free text where the prompt takes it and sends it as text", function()
    local s = sessions.upsert({ sessionId = "s1", name = "Q", state = "blocked", prompt = question, since = "2026-11-30T04:00:00Z" })
    local calls = H.stub_select(function(items)
      return items[#items]
    end)
    vim.ui.input = function(opts, cb)
      assert.matches("Which database", opts.prompt)
      cb("DuckDB, please")
    end
    local result
    ui.answer(s, nil, function(err, res)
      result = { err = err, res = res }
    end)
    H.wait(2000, function()
      return result ~= nil
    end)
    -- vim.ui.select numbers the items itself: "1: Postgres", not "1: 1. Postgres".
    assert.same({ "Postgres", "SQLite", "Type an answer…" }, calls[1].shown)
    assert.equals("runtime_answer", requests[1].method)
    assert.same({ sessionId = "s1", promptId = "p1", text = "DuckDB, please" }, requests[1].params)
    assert.equals("working", result.res.state)
  end)

  it("lists options by label, as vim.ui.select numbers them (1: Yes); an id that is not the number stays", function()
    local p = {
      promptId = "p2",
      kind = "confirm",
      question = "Overwrite?",
      options = { { id = "y", label = "Yes" }, { id = "n", label = "No", description = "keep the file" } },
    }
    local s = sessions.upsert({ sessionId = "s1", name = "Q", state = "blocked", prompt = p, since = "2026-11-30T04:00:00Z" })
    local calls = H.stub_select(function()
      return nil
    end)
    local done
    ui.answer(s, nil, function()
      done = true
    end)
    H.wait(2000, function()
      return done
    end)
    assert.same({ "Yes (y)", "No (n) — keep the file" }, calls[1].shown)
  end)

  it("offers free text and the terminal for a prompt with no options it can read", function()
    local unread = { promptId = "p3", kind = "permission", question = "Steps done so far", options = {}, freeform = true }
    local s = sessions.upsert({ sessionId = "s1", name = "Q", state = "blocked", prompt = unread, since = "2026-11-30T04:00:00Z" })
    local calls = H.stub_select(function(items)
      return items[1]
    end)
    vim.ui.input = function(_, cb)
      cb("2")
    end
    local result
    ui.answer(s, nil, function(err, res)
      result = { err = err, res = res }
    end)
    H.wait(2000, function()
      return result ~= nil
    end)
    assert.same({ "Type an answer…", "Open the terminal" }, calls[1].shown)
    assert.same({ sessionId = "s1", promptId = "p3", text = "2" }, requests[1].params)
  end)

  it("says an ACP session has no terminal instead of opening an empty one", function()
    local s = sessions.upsert({ sessionId = "s9", name = "Copilot", state = "idle", agentInfo = { name = "Copilot", version = "1.0.102" }, since = "2026-11-30T04:00:00Z" })
    local notes = H.notes()
    local buf = require("agentd.terminal").open(s)
    assert.is_nil(buf)
    assert.is_nil(require("agentd.terminal").buffer("s9"))
    assert.truthy(H.find_note(notes, "runs over ACP and has no terminal"))
  end)

  it("offers the new prompt when the one answered has changed", function()
    local s = sessions.upsert({ sessionId = "s1", name = "Q", state = "blocked", prompt = question, since = "2026-11-30T04:00:00Z" })
    local newer = vim.tbl_extend("force", question, { promptId = "p2", question = "Which port?", freeform = false })
    reply = function(_, params)
      if params.promptId == "p1" then
        return { code = -32021, message = "stale", data = { prompt = newer } }
      end
      return nil, { state = "working" }
    end
    local notes = H.notes()
    local calls = H.stub_select(function(items)
      return items[1]
    end)
    local result
    ui.answer(s, nil, function(err, res)
      result = { err = err, res = res }
    end)
    H.wait(2000, function()
      return result ~= nil
    end)
    assert.equals(2, #calls)
    assert.matches("Which port%?", calls[2].opts.prompt)
    assert.equals("p2", requests[2].params.promptId)
    assert.truthy(H.find_note(notes, "another prompt"))
    assert.is_nil(result.err)
  end)

  it("says so when the prompt is gone or was answered already", function()
    local s = sessions.upsert({ sessionId = "s1", name = "Q", state = "blocked", prompt = question, since = "2026-11-30T04:00:00Z" })
    local notes = H.notes()
    H.stub_select(function(items)
      return items[1]
    end)
    reply = function()
      return { code = -32021, message = "stale", data = {} }
    end
    local n = 0
    ui.answer(s, nil, function()
      n = n + 1
    end)
    H.wait(2000, function()
      return n == 1
    end)
    reply = function()
      return { code = -32025, message = "leaving" }
    end
    ui.answer(s, nil, function()
      n = n + 1
    end)
    H.wait(2000, function()
      return n == 2
    end)
    assert.truthy(H.find_note(notes, "no longer on screen"))
    assert.truthy(H.find_note(notes, "already answered"))
  end)

  local edit = {
    promptId = "p5",
    kind = "permission",
    question = "Do you want to proceed?",
    subject = {
      kind = "edit",
      text = "src/app.lua",
      detail = "--- src/app.lua\n+++ src/app.lua\n@@ -1,2 +1,2 @@\n local a = 1\n-local b = 2\n+local b = 3",
    },
    options = { { id = "1", label = "Yes" }, { id = "2", label = "No" } },
  }

  local function notice_of(prompt)
    local s = sessions.upsert({ sessionId = "s1", name = "Q", state = "blocked", prompt = prompt, since = "2026-11-30T04:00:00Z" })
    ui.notice(s)
    local n = ui.current_notice()
    local lines = vim.api.nvim_buf_get_lines(n.buf, 0, -1, false)
    local groups = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(n.buf, -1, 0, -1, { details = true })) do
      groups[lines[m[2] + 1]] = m[4].hl_group
    end
    return s, n, lines, groups
  end

  it("says what a prompt approves on one line: the question, then the subject", function()
    local p = function(sub, q)
      return ui.prompt_text({ question = q or "Do you want to proceed?", subject = sub })
    end
    assert.equals("Do you want to proceed? — command: rm -rf build", p({ kind = "command", text = "rm -rf build" }))
    assert.equals("Do you want to proceed? — edit: NOTES.md", p({ kind = "edit", text = "NOTES.md", detail = "-a\n+b" }))
    assert.equals("Do you want to proceed? — fetch: https://example.com (cut)", p({ kind = "fetch", text = "https://example.com", truncated = true }))
    assert.equals(
      "Do you want to proceed? — agentd could not read what it approves: see the terminal",
      p({ kind = "other", text = "", truncated = true })
    )
    -- Newlines and control characters never reach a one-line place; 10,000 characters are bounded.
    assert.equals("Do you want to proceed? — command: echo a rm -rf ~ x", p({ kind = "command", text = "echo a\nrm -rf ~\r\t\0x" }))
    local long = p({ kind = "command", text = "echo " .. ("x"):rep(10000) })
    assert.is_true(vim.fn.strchars(long) < 250)
    assert.equals("…", vim.fn.strcharpart(long, vim.fn.strchars(long) - 1))
  end)

  it("shows the subject in the notice: its line, then a diff's rows with diff highlighting", function()
    local _, _, lines, groups = notice_of(edit)
    assert.same({
      " s1 Q needs you",
      " Do you want to proceed?",
      " edit: src/app.lua",
      "   --- src/app.lua",
      "   +++ src/app.lua",
      "   @@ -1,2 +1,2 @@",
      "    local a = 1",
      "   -local b = 2",
      "   +local b = 3",
      "   1. Yes",
      "   2. No",
      " :Agentd answer · d: the diff · :Agentd dismiss",
    }, lines)
    assert.equals("AgentdNoticeSubject", groups[" edit: src/app.lua"])
    assert.equals("AgentdNoticeDiffFile", groups["   --- src/app.lua"])
    assert.equals("AgentdNoticeDiffHunk", groups["   @@ -1,2 +1,2 @@"])
    assert.equals("AgentdNoticeDiffContext", groups["    local a = 1"])
    assert.equals("AgentdNoticeDiffDelete", groups["   -local b = 2"])
    assert.equals("AgentdNoticeDiffAdd", groups["   +local b = 3"])
    -- The groups link to the diff colours a colour scheme has.
    assert.equals("DiffAdd", vim.api.nvim_get_hl(0, { name = "AgentdNoticeDiffAdd" }).link)
    assert.equals("DiffDelete", vim.api.nvim_get_hl(0, { name = "AgentdNoticeDiffDelete" }).link)
  end)

  it("highlights rows as an agent drew them: line numbers before the marker", function()
    local codex = vim.deepcopy(edit)
    codex.subject.detail = "2 -second line\n2 +second line, edited\n4 +fourth line"
    local _, _, _, groups = notice_of(codex)
    assert.equals("AgentdNoticeDiffDelete", groups["   2 -second line"])
    assert.equals("AgentdNoticeDiffAdd", groups["   4 +fourth line"])
  end)

  it("shows at most notice.detail_rows rows, then how many more, and d opens all of it read-only", function()
    local long = vim.deepcopy(edit)
    local rows = {}
    for i = 1, 30 do
      table.insert(rows, "+row " .. i)
    end
    long.subject.detail = table.concat(rows, "\n")
    local s, n, lines = notice_of(long)
    assert.equals(" … 18 more rows: d shows all", lines[3 + 12 + 1])
    vim.api.nvim_set_current_win(n.win)
    vim.api.nvim_feedkeys("d", "x", false)
    local buf = vim.api.nvim_get_current_buf()
    assert.equals("agentd://s1/diff", vim.api.nvim_buf_get_name(buf))
    assert.equals("diff", vim.bo[buf].filetype)
    assert.is_false(vim.bo[buf].modifiable)
    assert.is_false(vim.bo[buf].modeline)
    local shown = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    assert.equals("# s1 Q: edit: src/app.lua", shown[1])
    assert.equals(31, #shown)
    assert.equals("+row 30", shown[31])
    vim.cmd("close")
    assert.equals("s1", s.id)
  end)

  it("a multi-line command: its rows in the notice, :Agentd show opens it as sh", function()
    local script = { promptId = "p6", kind = "permission", question = "Run this?", options = { { id = "1", label = "Yes" } },
      subject = { kind = "command", text = "for f in *; do gzip $f; done", detail = "for f in *; do\n  gzip $f\ndone" } }
    local _, _, lines, groups = notice_of(script)
    assert.same({ " s1 Q needs you", " Run this?", " command:", "   for f in *; do", "     gzip $f", "   done", "   1. Yes", " :Agentd answer · d: all of it · :Agentd dismiss" }, lines)
    assert.equals("AgentdNoticeDetail", groups["     gzip $f"])
    vim.cmd("Agentd show s1")
    local buf = vim.api.nvim_get_current_buf()
    assert.equals("sh", vim.bo[buf].filetype)
    assert.same({ "# s1 Q: command: for f in *; do gzip $f; done", "for f in *; do", "  gzip $f", "done" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    vim.cmd("close")
  end)

  it("a subject agentd could not read: the notice says so and points at the terminal", function()
    local unread = vim.deepcopy(edit)
    unread.subject = { kind = "other", text = "", truncated = true }
    local _, _, lines, groups = notice_of(unread)
    assert.equals(" agentd could not read what it approves: see the terminal", lines[3])
    assert.equals(" (:Agentd open)", lines[4])
    assert.equals("AgentdNoticeWarn", groups[lines[3]])
  end)

  it("keeps hostile text inert: no control character reaches a buffer line, modelines are off, nothing is run", function()
    local hostile = vim.deepcopy(edit)
    vim.g.agentd_pwned = nil
    hostile.question = "Proceed?\n:lua vim.g.agentd_pwned = 1\r"
    hostile.subject = {
      kind = "edit",
      text = "x.lua\n%{luaeval('vim.g.agentd_pwned=1')}",
      detail = "+\27[31mred\27[0m\0\r\n+vim: set ft=lua modeline:\n-`touch /tmp/pwned`\t$(rm -rf ~)",
    }
    hostile.options = { { id = "1", label = "Yes\n2. No" } }
    local s, _, lines = notice_of(hostile)
    for _, l in ipairs(lines) do
      assert.is_nil(l:find("%c"), ("a control character in %q"):format(l))
    end
    assert.equals(" Proceed? :lua vim.g.agentd_pwned = 1", lines[2])
    assert.equals("   1. Yes 2. No", lines[#lines - 1])
    local buf = ui.show_subject(s)
    assert.is_false(vim.bo[buf].modeline)
    assert.equals("diff", vim.bo[buf].filetype)
    for _, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      assert.is_nil(l:find("[%z\1-\8\10-\31\127]"), ("a control character in %q"):format(l))
    end
    vim.cmd("close")
    assert.is_nil(vim.g.agentd_pwned)
    -- The picker's prompt is one line too.
    local calls = H.stub_select(function()
      return nil
    end)
    local done
    ui.answer(s, nil, function()
      done = true
    end)
    H.wait(2000, function()
      return done
    end)
    assert.is_nil(calls[1].opts.prompt:find("\n"))
    assert.matches("x%.lua %%{luaeval", calls[1].opts.prompt)
  end)
end)

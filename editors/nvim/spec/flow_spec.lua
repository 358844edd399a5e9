-- The whole flow against the real agentd hosting its demo agent: spawn →
-- blocked → statusline and notice → a picked option → runtime_answer →
-- working → done.
local H = require("helpers")

describe("a demo agent session", function()
  local agentd
  before_each(function()
    agentd = H.fresh()
  end)
  after_each(function()
    H.stop_all()
  end)

  it("goes blocked, is answered from a stubbed vim.ui.select, and finishes", function()
    local notes = H.notes()
    local events = {}
    vim.api.nvim_create_autocmd("User", {
      pattern = "AgentdState",
      callback = function(ev)
        table.insert(events, ev.data.session.state)
      end,
    })
    local s = H.demo(agentd)
    assert.equals("○ 1 idle", H.statusline())

    H.to_blocked(agentd, s.id)
    local blocked = H.session(s.id)
    assert.equals("Do you want to proceed?", blocked.prompt.question)
    assert.same({ kind = "command", text = "touch NOTES.md", detail = "touch NOTES.md" }, blocked.prompt.subject)
    assert.equals("● 1 blocked", H.statusline())
    assert.equals("AgentdStatusBlocked", vim.api.nvim_eval_statusline(agentd.statusline(), { highlights = true }).highlights[1].group)

    -- The floating notice, not focused.
    local n = require("agentd.ui").current_notice()
    assert.is_table(n)
    assert.equals(s.id, n.session)
    assert.equals("editor", vim.api.nvim_win_get_config(n.win).relative)
    assert.are_not.equal(n.win, vim.api.nvim_get_current_win())
    local text = table.concat(vim.api.nvim_buf_get_lines(n.buf, 0, -1, false), "\n")
    assert.matches("needs you", text)
    assert.matches("Do you want to proceed%?", text)
    assert.matches("command: touch NOTES%.md", text)
    assert.matches("1%. Yes", text)

    -- A person picks "Yes" (the menu numbers it "1: Yes" itself).
    local calls = H.stub_select(function(items, _, shown)
      for i, label in ipairs(shown) do
        if label:match("^Yes$") then
          return items[i]
        end
      end
    end)
    vim.cmd("Agentd answer")
    H.wait(5000, function()
      return #calls == 1 and H.session(s.id).state ~= "blocked"
    end, function()
      return "no answer; select calls: " .. #calls .. ", state " .. H.session(s.id).state
    end)
    assert.equals("s1 Demo agent: Do you want to proceed? — command: touch NOTES.md", calls[1].opts.prompt)
    assert.same({ "Yes", "Yes, and don't ask again this session", "No, and tell the agent what to do differently" }, calls[1].shown)
    assert.is_nil(require("agentd.ui").current_notice())

    H.wait_state(s.id, "done", 8000)
    assert.equals("completed", H.session(s.id).outcome)
    assert.equals("✓ 1 done", H.statusline())
    assert.truthy(H.find_note(notes, s.id .. " Demo agent finished %(completed%)"))
    assert.matches("Added NOTES.md", H.screen(s.id))
    -- Every state came through the User autocmd, in order.
    local seen = table.concat(events, " ")
    assert.matches("idle.*working.*blocked.*working.*done", seen)
  end)

  it("names the command a task asks to run, in the notice and in the picker's prompt", function()
    local s = H.demo(agentd)
    H.to_blocked(agentd, s.id, "please run rm -rf build")
    local n = require("agentd.ui").current_notice()
    local lines = vim.api.nvim_buf_get_lines(n.buf, 0, -1, false)
    assert.equals(" command: rm -rf build", lines[3])
    local calls = H.stub_select(function(items)
      return items[1]
    end)
    vim.cmd("Agentd answer")
    H.wait_state(s.id, "done", 8000)
    assert.equals("s1 Demo agent: Do you want to proceed? — command: rm -rf build", calls[1].opts.prompt)
    assert.matches("Ran rm %-rf build", H.screen(s.id))
  end)

  it("shows an edit's file and diff rows in the notice, highlighted, and d opens the diff", function()
    local s = H.demo(agentd)
    H.to_blocked(agentd, s.id, "edit NOTES.md")
    local p = H.session(s.id).prompt
    assert.equals("edit", p.subject.kind)
    assert.equals("NOTES.md", p.subject.text)
    local n = require("agentd.ui").current_notice()
    local lines = vim.api.nvim_buf_get_lines(n.buf, 0, -1, false)
    assert.same({
      " s1 Demo agent needs you",
      " Do you want to proceed?",
      " edit: NOTES.md",
      "    # NOTES.md",
      "   -TODO: write these notes",
      "   +Notes kept by the demo agent.",
      "   +(demo: nothing is written)",
      "    See README.md for the rest.",
      "   1. Yes",
      "   2. Yes, and don't ask again this session",
      "   3. No, and tell the agent what to do differently",
      " :Agentd answer · d: the diff · :Agentd dismiss",
    }, lines)
    local groups = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(n.buf, -1, 0, -1, { details = true })) do
      groups[m[2] + 1] = m[4].hl_group
    end
    assert.equals("AgentdNoticeDiffDelete", groups[5])
    assert.equals("AgentdNoticeDiffAdd", groups[6])
    assert.equals("AgentdNoticeDiffAdd", groups[7])
    assert.equals("AgentdNoticeDiffContext", groups[8])
    vim.api.nvim_set_current_win(n.win)
    vim.api.nvim_feedkeys("d", "x", false)
    local buf = vim.api.nvim_get_current_buf()
    assert.equals("diff", vim.bo[buf].filetype)
    assert.same({
      "# s1 Demo agent: edit: NOTES.md",
      " # NOTES.md",
      "-TODO: write these notes",
      "+Notes kept by the demo agent.",
      "+(demo: nothing is written)",
      " See README.md for the rest.",
    }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    vim.cmd("close")
    -- Answered from the notice: the agent edits.
    vim.api.nvim_set_current_win(n.win)
    vim.cmd("normal 1")
    H.wait_state(s.id, "done", 8000)
    assert.matches("Edited NOTES%.md", H.screen(s.id))
  end)

  it("offers the prompt instead when :Agentd send meets a blocked session", function()
    local s = H.demo(agentd)
    H.to_blocked(agentd, s.id)
    local notes = H.notes()
    local calls = H.stub_select(function()
      return nil -- the person closes the picker
    end)
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "please also add a README" })
    vim.cmd("1Agentd send " .. s.id)
    H.wait(3000, function()
      return #calls == 1
    end, function()
      return "no prompt offered; notes: " .. vim.inspect(notes)
    end)
    assert.matches("Do you want to proceed%?", calls[1].opts.prompt)
    assert.truthy(H.find_note(notes, "waiting on a prompt"))
    assert.equals("blocked", H.session(s.id).state)
  end)

  it("types a visual selection into an idle agent with :'<,'>Agentd send", function()
    local s = H.demo(agentd)
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "Write the", "release notes" })
    vim.cmd("normal! ggVj\27")
    vim.cmd("'<,'>Agentd send " .. s.id)
    H.wait_blocked_after_send(s.id)
    assert.matches("> Write the", H.screen(s.id))
  end)

  it("answers with a digit typed in the notice", function()
    H.notes()
    local s = H.demo(agentd)
    H.to_blocked(agentd, s.id)
    local n = require("agentd.ui").current_notice()
    vim.api.nvim_set_current_win(n.win)
    vim.cmd("normal 1")
    H.wait_state(s.id, "done", 8000)
    assert.is_nil(require("agentd.ui").current_notice())
  end)

  it("shows one notice at a time and the next when the first is dismissed", function()
    local a = H.demo(agentd)
    local b = H.demo(agentd)
    H.to_blocked(agentd, a.id)
    H.to_blocked(agentd, b.id)
    assert.equals("● 2 blocked", H.statusline())
    local floats = vim.tbl_filter(function(w)
      return vim.api.nvim_win_get_config(w).relative ~= ""
    end, vim.api.nvim_list_wins())
    assert.equals(1, #floats)
    assert.equals(a.id, require("agentd.ui").current_notice().session)
    vim.cmd("Agentd dismiss")
    assert.equals(b.id, require("agentd.ui").current_notice().session)
    vim.cmd("Agentd dismiss")
    assert.is_nil(require("agentd.ui").current_notice())
    -- Dismissed is not answered: both still wait.
    assert.equals("● 2 blocked", H.statusline())
  end)

  it("is killed with :Agentd kill and leaves the statusline", function()
    local s = H.demo(agentd)
    assert.equals("○ 1 idle", H.statusline())
    vim.cmd("Agentd kill " .. s.id)
    H.wait_state(s.id, "exited", 5000)
    assert.equals("", H.statusline())
    H.wait(3000, function()
      return H.session(s.id).exit ~= nil
    end, function()
      return "no session/exited"
    end)
    assert.equals("SIGHUP", H.session(s.id).exit.signal)
  end)

  it("starts one agentd for the whole Neovim", function()
    H.demo(agentd)
    H.demo(agentd, { env = {} })
    assert.equals(1, #H.agentd_pids())
    -- initialize was answered (not refused), and named agentd's agents.
    local server = require("agentd.rpc").server()
    assert.equals(1, server.protocolVersion)
    assert.equals("agentd", server.serverInfo.name)
    assert.is_true(#server.agents > 0)
    assert.equals(2, #agentd.sessions())
    -- :Agentd list asks agentd (session/list) and echoes one line a session.
    local echoed
    local echo = vim.api.nvim_echo
    vim.api.nvim_echo = function(chunks)
      echoed = table.concat(vim.tbl_map(function(c)
        return c[1]
      end, chunks))
    end
    vim.cmd("Agentd list")
    H.wait(2000, function()
      return echoed ~= nil
    end)
    vim.api.nvim_echo = echo
    assert.matches("s1 +idle +Demo agent\ns2 +idle +Demo agent", echoed)
  end)
end)

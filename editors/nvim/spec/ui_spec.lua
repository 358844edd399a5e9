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
end)

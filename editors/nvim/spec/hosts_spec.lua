-- Several hosts ([[hosts]], docs/hosts.md): sessions keyed by (host, id),
-- every action sent to its session's host, hosts' states and retries.
-- The other hosts' sidecars (agentd --stdio --host NAME) are fakes here:
-- what they answer is scripted per host. The real ones, over real OpenSSH
-- servers, are driven by cmd/agentd/nvim_hosts_e2e_test.go.
local H = require("helpers")

local T = "2026-12-07T03:00:00Z"

local function demo(id, state, promptId)
  return {
    sessionId = id,
    name = "demo",
    agent = "demo",
    cwd = "/src",
    state = state,
    since = T,
    prompt = promptId and {
      promptId = promptId,
      kind = "permission",
      question = "Do you want to proceed?",
      options = { { id = "1", label = "Yes" }, { id = "2", label = "No" } },
    } or nil,
  }
end

-- A fake transport: each host's sidecar answers as script[host] says
-- (method -> function(params) returning err, result; nil: no answer yet).
local function fake(script)
  local F = { clients = {}, requests = {}, GONE = -32099 }
  function F.start(argv, opts)
    local host
    for i, a in ipairs(argv) do
      if a == "--host" then
        host = argv[i + 1]
      end
    end
    local c = { host = host, argv = argv, opts = opts, closed = false }
    F.clients[host] = F.clients[host] or {}
    table.insert(F.clients[host], c)
    function c.request(method, params, cb)
      if c.closed then
        return false
      end
      table.insert(F.requests, { host = host, method = method, params = params })
      local fn = (script[host] or {})[method]
      if fn then
        local err, result = fn(params)
        vim.schedule(function()
          cb(err, result)
          if err and method == "initialize" then
            c.exit() -- as agentd's forwarder does after a refusal
          end
        end)
      end
      return true
    end
    function c.notify(method, params)
      table.insert(F.requests, { host = host, method = method, params = params, notification = true })
      return true
    end
    function c.is_closing()
      return c.closed
    end
    function c.terminate()
      c.exit()
    end
    function c.exit()
      if not c.closed then
        c.closed = true
        vim.schedule(function()
          opts.on_exit(0, 0)
        end)
      end
    end
    function c.stderr()
      return {}
    end
    return c
  end
  function F.last(host)
    local l = F.clients[host] or {}
    return l[#l]
  end
  function F.sent(host, method)
    local out = {}
    for _, r in ipairs(F.requests) do
      if r.host == host and r.method == method then
        table.insert(out, r.params)
      end
    end
    return out
  end
  return F
end

local function up(sessions_of)
  return {
    initialize = function()
      return nil, { protocolVersion = 1, serverInfo = { name = "agentd" } }
    end,
    ["session/list"] = function()
      return nil, { sessions = sessions_of() }
    end,
    runtime_answer = function()
      return nil, { state = "working" }
    end,
  }
end

local CONFIGURED = {
  { name = "local", ["local"] = true },
  { name = "a", ssh = "127.0.0.1" },
  { name = "b", ssh = "127.0.0.1" },
}

describe("hosts", function()
  local agentd, hosts, sessions, ui, F, delays
  before_each(function()
    agentd = H.fresh()
    hosts = require("agentd.hosts")
    sessions = require("agentd.sessions")
    ui = require("agentd.ui")
    delays = {}
    hosts._defer = function(fn, ms)
      table.insert(delays, ms)
      vim.defer_fn(fn, 10)
    end
  end)
  after_each(function()
    hosts._reset()
  end)

  it("with only this machine configured, starts no sidecar and labels as before", function()
    F = fake({})
    hosts._transport = F
    hosts.start({ { name = "local", ["local"] = true } })
    assert.is_false(hosts.multi())
    assert.same({}, F.clients)
    local s = sessions.upsert(demo("s1", "blocked", "p1"))
    assert.equals("s1", sessions.key(s))
    assert.equals("s1 demo", sessions.label(s))
    assert.equals(s, sessions.find("demo"))
  end)

  it("keys two hosts' identical sessions apart and sends an answer only to its host", function()
    F = fake({
      a = up(function()
        return { demo("s1", "blocked", "same") }
      end),
      b = up(function()
        return { demo("s1", "blocked", "same") }
      end),
    })
    hosts._transport = F
    hosts.start(CONFIGURED)
    assert.is_true(hosts.multi())
    -- One sidecar per other host, with --host NAME --no-start.
    local argv = F.last("a").argv
    assert.same({ "--stdio", "--host", "a", "--no-start" }, { argv[#argv - 3], argv[#argv - 2], argv[#argv - 1], argv[#argv] })
    H.wait(0, function()
      return sessions.get("a:s1") ~= nil and sessions.get("b:s1") ~= nil
    end, function()
      return vim.inspect(sessions.list())
    end)
    -- This machine's own s1 as well.
    sessions.upsert(demo("s1", "working"))
    local a1, b1, l1 = sessions.get("a:s1"), sessions.get("b:s1"), sessions.get("s1")
    assert.are_not.equal(a1, b1)
    assert.equals("a: s1 demo", sessions.label(a1))
    assert.equals("b: s1 demo", sessions.label(b1))
    assert.equals("local: s1 demo", sessions.label(l1))
    assert.equals(a1, sessions.find("a:demo"))
    assert.equals(l1, sessions.find("local:demo"))
    assert.is_nil(sessions.find("demo")) -- ambiguous: three hosts have one
    -- The statusline counts every host's blocked sessions.
    assert.equals("● 2 ◐ 1", agentd.statusline({ labels = false, highlights = false }))

    -- Answering a's from the picker: a's sidecar gets it, with a's id; b's none.
    local calls = H.stub_select(function(items)
      return items[1]
    end)
    local done, answer_err = false, nil
    agentd.answer("a:s1", function(err)
      done, answer_err = true, err
    end)
    H.wait(0, function()
      return done
    end)
    assert.is_nil(answer_err)
    assert.truthy(calls[1].opts.prompt:find("a: s1 demo", 1, true), calls[1].opts.prompt)
    local to_a, to_b = F.sent("a", "runtime_answer"), F.sent("b", "runtime_answer")
    assert.equals(1, #to_a)
    assert.same({ sessionId = "s1", promptId = "same", optionId = "1" }, to_a[1])
    assert.equals(0, #to_b)

    -- A state from b changes b's session only.
    F.last("b").opts.on_notification("session/state", {
      sessionId = "s1",
      agent = "demo",
      state = "working",
      previous = "blocked",
      since = "2026-12-07T03:00:01Z",
    })
    assert.equals("working", sessions.get("b:s1").state)
    assert.equals("blocked", sessions.get("a:s1").state)

    -- send and kill go to the session's host too.
    agentd.send("hello", "b:s1")
    agentd.kill("b:s1")
    H.wait(0, function()
      return #F.sent("b", "session/kill") == 1
    end)
    assert.equals("s1", F.sent("b", "runtime_send")[1].sessionId)
    assert.equals("hello", F.sent("b", "runtime_send")[1].text)
    assert.equals(0, #F.sent("a", "runtime_send") + #F.sent("a", "session/kill"))

    -- b's terminal: subscribed and sized on b, b's output written in it, a's not.
    agentd.open("b:s1")
    H.wait(0, function()
      return #F.sent("b", "session/subscribe") == 1
    end)
    assert.same({ sessionId = "s1", output = true }, F.sent("b", "session/subscribe")[1])
    assert.equals("s1", F.sent("b", "session/resize")[1].sessionId)
    assert.equals(0, #F.sent("a", "session/subscribe") + #F.sent("a", "session/resize"))
    local buf = require("agentd.terminal").buffer("b:s1")
    assert.truthy(buf, "b:s1 has a terminal buffer")
    F.last("a").opts.on_notification("session/output", { sessionId = "s1", data = "from a" })
    F.last("b").opts.on_notification("session/output", { sessionId = "s1", data = "from b" })
    H.wait(0, function()
      return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"):find("from b", 1, true) ~= nil
    end)
    assert.is_nil(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"):find("from a", 1, true))
  end)

  it("names the host in the notice and in :Agentd list, each host under its state", function()
    F = fake({
      a = up(function()
        return { demo("s1", "blocked", "pa") }
      end),
      b = {
        initialize = function()
          return { code = -32000, message = "agentd: host b: ssh: connect to host 127.0.0.1 port 1: Connection refused\r\n\27[31mx" }
        end,
      },
    })
    hosts._transport = F
    hosts.start(CONFIGURED)
    local notes = H.notes()
    H.wait(0, function()
      return sessions.get("a:s1") ~= nil and hosts.status("b").state == "down"
    end)
    -- Told once that a's demo waits, by host.
    assert.truthy(H.find_note(notes, "wait for you: a: s1 demo"), vim.inspect(notes))
    -- A prompt that wants attention raises the notice, naming the host.
    F.last("a").opts.on_notification("session/state", {
      sessionId = "s1",
      agent = "demo",
      state = "blocked",
      previous = "working",
      since = "2026-12-07T03:00:02Z",
      attention = true,
      prompt = demo("s1", "blocked", "pa2").prompt,
    })
    local n = ui.current_notice()
    assert.truthy(n, "a notice for a:s1")
    assert.equals("a:s1", n.session)
    local lines = vim.api.nvim_buf_get_lines(n.buf, 0, -1, false)
    assert.truthy(lines[1]:find("a: s1 demo needs you", 1, true), lines[1])
    -- ssh's words, one clean line.
    assert.equals("agentd: host b: ssh: connect to host 127.0.0.1 port 1: Connection refused [31mx", hosts.status("b").message)
    local echoed
    local real_echo = vim.api.nvim_echo
    vim.api.nvim_echo = function(chunks)
      echoed = chunks
    end
    agentd.list() -- after this machine's agentd says it runs no daemon
    H.wait(0, function()
      return echoed ~= nil
    end)
    vim.api.nvim_echo = real_echo
    local text = {}
    for _, c in ipairs(echoed or {}) do
      table.insert(text, c[1])
    end
    text = table.concat(text)
    assert.truthy(text:find("local (this machine, not connected)\n  no sessions", 1, true), text)
    assert.truthy(text:find("a (up)\n  s1    blocked", 1, true), vim.inspect(text))
    assert.truthy(text:find("b (down: agentd: host b: ssh: connect", 1, true), text)
  end)

  it("treats -32042 as no daemon and retries a host after 1 s, doubling to 30 s", function()
    local tries = 0
    F = fake({
      a = {
        initialize = function()
          tries = tries + 1
          return { code = -32042, message = "no agentd daemon runs" }
        end,
      },
      b = up(function()
        return {}
      end),
    })
    hosts._transport = F
    hosts.start(CONFIGURED)
    H.wait(0, function()
      return tries >= 7
    end)
    assert.equals("no daemon", hosts.status("a").state)
    assert.equals("up", hosts.status("b").state)
    assert.same({ 1000, 2000, 4000, 8000, 16000, 30000 }, vim.list_slice(delays, 1, 6))
    -- Each refused sidecar is let go.
    assert.is_true(F.clients.a[1].closed)
  end)

  it("a sidecar that exits is reconnecting, its sessions run on and come back", function()
    local list = { demo("s1", "blocked", "pa") }
    local down = false
    F = fake({
      a = {
        initialize = function()
          if down then
            return { code = -32000, message = "host a: ssh: Connection refused" }
          end
          return nil, { protocolVersion = 1 }
        end,
        ["session/list"] = function()
          return nil, { sessions = list }
        end,
      },
      b = up(function()
        return { demo("s1", "idle") }
      end),
    })
    hosts._transport = F
    local real_defer = hosts._defer
    local held = {}
    hosts._defer = function(fn, ms)
      table.insert(delays, ms)
      table.insert(held, fn) -- run when the spec says
    end
    hosts.start(CONFIGURED)
    H.wait(0, function()
      return sessions.get("a:s1") ~= nil and sessions.get("b:s1") ~= nil
    end)
    down = true
    F.last("a").exit()
    H.wait(0, function()
      return hosts.status("a").state == "reconnecting"
    end)
    -- Not ended: out of view until host a is back; b's untouched.
    assert.is_nil(sessions.get("a:s1"))
    assert.equals("idle", sessions.get("b:s1").state)
    assert.is_nil(ui.current_notice())
    table.remove(held, 1)()
    H.wait(0, function()
      return hosts.status("a").state == "down" and #held > 0
    end)
    down = false
    table.remove(held, 1)()
    H.wait(0, function()
      return sessions.get("a:s1") ~= nil
    end)
    assert.equals("up", hosts.status("a").state)
    assert.equals("blocked", sessions.get("a:s1").state)
    assert.same({ 1000, 2000 }, delays)
    hosts._defer = real_defer
  end)
end)

-- When agentd cannot start (it is missing, exits at once, refuses to
-- connect), the plugin says why once, with the command line, the exit code
-- and agentd's stderr, and opens nothing (issue 31).
local H = require("helpers")

local dir = vim.fn.tempname()
vim.fn.mkdir(dir, "p")

---Writes an executable shell script and returns its path.
local function script(name, body)
  local path = dir .. "/" .. name
  local f = assert(io.open(path, "w"))
  f:write("#!/bin/sh\n" .. body)
  f:close()
  vim.uv.fs_chmod(path, tonumber("755", 8))
  return path
end

local function layout()
  return { wins = #vim.api.nvim_list_wins(), bufs = #vim.api.nvim_list_bufs(), buf = vim.api.nvim_get_current_buf() }
end

---Runs an Ex command, then waits until a notice came and agentd is not
---running, and a little more for any second notice.
local function run(cmd, notes)
  vim.cmd(cmd)
  H.wait(10000, function()
    return #notes > 0 and not require("agentd.rpc").running()
  end, function()
    return ("notices: %s, running: %s"):format(vim.inspect(notes), tostring(require("agentd.rpc").running()))
  end)
  vim.wait(300)
end

local function errors(notes)
  return vim.tbl_filter(function(n)
    return n.level == vim.log.levels.ERROR
  end, notes)
end

describe("when agentd cannot start", function()
  after_each(function()
    H.stop_all()
  end)

  it("a cmd that exits 2 with a message: one notice with the command, the code and the message; no window", function()
    local bad = script("agentd-exits-2", 'echo "agentd: cannot read rules: rules/x.toml: line 3: bad key" >&2\nexit 2\n')
    H.fresh({ cmd = bad, open_on_new = true })
    local notes = H.notes()
    local before = layout()
    run("Agentd new demo", notes)
    assert.equals(1, #notes, vim.inspect(notes))
    local n = notes[1]
    assert.equals(vim.log.levels.ERROR, n.level)
    assert.matches("agentd did not start: it exited with code 2 before it answered initialize", n.msg)
    assert.matches("command: " .. vim.pesc(bad) .. " %-%-stdio", n.msg)
    assert.matches("stderr: agentd: cannot read rules: rules/x%.toml: line 3: bad key", n.msg)
    assert.same(before, layout())
    assert.is_false(require("agentd.rpc").running())
    assert.same({}, require("agentd").sessions())
  end)

  it("real agentd given a bad argument: the cause from its stderr, not its usage text", function()
    -- What the issue's person had: --stdio twice.
    H.fresh({ args = { "--stdio" }, open_on_new = true })
    local notes = H.notes()
    local before = layout()
    run("Agentd new demo", notes)
    assert.equals(1, #notes, vim.inspect(notes))
    assert.equals(vim.log.levels.ERROR, notes[1].level)
    assert.matches("exited with code 2", notes[1].msg)
    assert.matches("command: " .. vim.pesc(H.bin()) .. " %-%-stdio %-%-stdio", notes[1].msg)
    assert.matches("stderr: flag provided but not defined: %-stdio", notes[1].msg)
    assert.is_nil(notes[1].msg:find("Usage"))
    assert.same(before, layout())
  end)

  it("autoconnect at start with a cmd that exits 2: one notice; with a cmd not found: none (not installed yet)", function()
    local bad = script("agentd-exits-2b", 'echo "agentd: cannot read rules" >&2\nexit 2\n')
    H.fresh({ cmd = bad })
    local notes = H.notes()
    require("agentd").connect_if_running()
    H.wait(10000, function()
      return #notes > 0
    end)
    vim.wait(300)
    assert.equals(1, #notes, vim.inspect(notes))
    assert.matches("exited with code 2 before it answered initialize", notes[1].msg)
    assert.matches("command: " .. vim.pesc(bad) .. " %-%-stdio %-%-no%-start", notes[1].msg)
    H.fresh({ cmd = dir .. "/no-such-agentd" })
    notes = H.notes()
    require("agentd").connect_if_running()
    vim.wait(300)
    assert.same({}, notes)
  end)

  it("a cmd that does not exist: one notice naming it, and no window", function()
    H.fresh({ cmd = dir .. "/no-such-agentd", open_on_new = true })
    local notes = H.notes()
    local before = layout()
    run("Agentd new demo", notes)
    assert.equals(1, #notes, vim.inspect(notes))
    assert.equals(vim.log.levels.ERROR, notes[1].level)
    assert.matches('"' .. vim.pesc(dir) .. '/no%-such%-agentd" was not found', notes[1].msg)
    assert.matches("command: " .. vim.pesc(dir) .. "/no%-such%-agentd %-%-stdio", notes[1].msg)
    assert.same(before, layout())
  end)

  it("a cmd that is not executable says so", function()
    local path = dir .. "/not-executable"
    vim.fn.writefile({ "#!/bin/sh" }, path)
    H.fresh({ cmd = path, open_on_new = true })
    local notes = H.notes()
    local before = layout()
    run("Agentd new demo", notes)
    assert.equals(1, #notes, vim.inspect(notes))
    assert.matches("is not executable", notes[1].msg)
    assert.same(before, layout())
  end)

  it("a daemon that refuses the connection (another protocol): its message and exit code, once", function()
    -- What agentd's forwarder does when the daemon speaks another protocol:
    -- it answers the first request with -32041, says so on stderr, exits 1.
    local msg = "agentd: the running agentd daemon (pid 1, version 0.0.1) speaks protocol 0 and this agentd speaks 1: run `agentd stop`, then start again"
    local body = vim.json.encode({ jsonrpc = "2.0", id = 1, error = { code = -32041, message = msg } })
    local refuse = script(
      "agentd-incompatible",
      ("printf 'Content-Length: %d\\r\\n\\r\\n%%s' '%s'\necho '%s' >&2\nsleep 0.2\nexit 1\n"):format(#body, body, msg)
    )
    H.fresh({ cmd = refuse, open_on_new = true })
    local notes = H.notes()
    local before = layout()
    run("Agentd new demo", notes)
    assert.equals(1, #notes, vim.inspect(notes))
    assert.equals(vim.log.levels.ERROR, notes[1].level)
    assert.matches("agentd did not start: it refused initialize: the running agentd daemon %(pid 1", notes[1].msg)
    assert.matches("exited with code 1", notes[1].msg)
    assert.matches("command: " .. vim.pesc(refuse) .. " %-%-stdio", notes[1].msg)
    -- The same line on stderr is not said twice.
    assert.is_nil(notes[1].msg:find("stderr:"))
    assert.same(before, layout())
  end)

  it("real agentd that refuses its socket's folder: why, once", function()
    -- agentd refuses a socket folder others can reach, and answers
    -- initialize with -32043 and the reason (before, -32042, the code a
    -- connection that starts no daemon takes quietly).
    local open = dir .. "/open-run"
    vim.fn.mkdir(open, "p")
    vim.uv.fs_chmod(open, tonumber("755", 8))
    H.fresh({ socket = open .. "/agentd.sock", open_on_new = true })
    local notes = H.notes()
    local before = layout()
    run("Agentd new demo", notes)
    assert.equals(1, #notes, vim.inspect(notes))
    assert.equals(vim.log.levels.ERROR, notes[1].level)
    assert.matches("agentd did not start: it refused initialize: agentd's folder " .. vim.pesc(open) .. " has mode 0755", notes[1].msg)
    assert.matches("exited with code 1", notes[1].msg)
    assert.matches("command: " .. vim.pesc(H.bin()) .. " %-%-stdio %-%-socket " .. vim.pesc(open) .. "/agentd%.sock", notes[1].msg)
    assert.same(before, layout())
  end)

  it("a cmd list with --stdio runs without the duplicate, and setup() shows the right form once", function()
    H.fresh({ cmd = { H.bin(), "--stdio" }, open_on_new = true })
    local _, built = require("agentd.config").build({ cmd = { H.bin(), "--stdio" } })
    assert.equals(1, #built)
    assert.matches('has %-%-stdio, which the plugin adds itself: write cmd = "' .. vim.pesc(H.bin()) .. '"', built[1])
    local notes = H.notes()
    local before = layout()
    -- The issue's command: a path and its arguments, run as that argv.
    vim.cmd("Agentd new " .. H.bin() .. " demo-agent")
    H.wait(10000, function()
      return #require("agentd").sessions() == 1
    end, function()
      return "no session; notices: " .. vim.inspect(notes)
    end)
    local s = require("agentd").sessions()[1]
    assert.same({ H.bin(), "demo-agent" }, s.argv)
    assert.same({}, errors(notes))
    -- Its terminal opened, in one new window.
    assert.equals(before.wins + 1, #vim.api.nvim_list_wins())
    assert.equals(s.id, vim.b.agentd_session)
  end)

  it("setup() notices a cmd with --stdio in one vim.notify", function()
    H.fresh()
    local notes = H.notes()
    require("agentd").setup({ cmd = { H.bin(), "--stdio", "--verbose" }, autoconnect = false })
    assert.equals(1, #notes, vim.inspect(notes))
    assert.equals(vim.log.levels.WARN, notes[1].level)
    assert.matches('cmd = "' .. vim.pesc(H.bin()) .. '", args = { "%-%-verbose" }', notes[1].msg)
  end)

  it(":Agentd new with a name that is neither an agent nor a program says what it expected", function()
    H.fresh({ open_on_new = true })
    local notes = H.notes()
    local before = layout()
    vim.cmd("Agentd new no-such-agent-31 --flag")
    H.wait(10000, function()
      return #notes > 0
    end)
    vim.wait(200)
    assert.equals(1, #notes, vim.inspect(notes))
    assert.equals(vim.log.levels.ERROR, notes[1].level)
    assert.matches('"no%-such%-agent%-31" is neither an agent name %(:Agentd new <Tab> lists them%) nor a program agentd could run: ', notes[1].msg)
    assert.matches("no%-such%-agent%-31", notes[1].msg:match("could run: ([^\n]*)"))
    assert.matches(":Agentd new /path/to/program %[ARGS…%] runs a program", notes[1].msg)
    assert.same(before, layout())
  end)

  it("agentd exiting while a request waits: the request fails at once, it does not hang", function()
    local agentd = H.fresh()
    local rpc = require("agentd.rpc")
    assert.is_true(agentd.start())
    local ready
    rpc.when_ready(function(err)
      ready = { err = err }
    end)
    H.wait(10000, function()
      return ready ~= nil
    end)
    assert.is_nil(ready.err)
    vim.notify = function() end -- the crash notice is not this spec's
    local got
    -- The forwarder (this Neovim's child) dies; the request goes out before
    -- Neovim has heard of it, and is never answered.
    vim.uv.kill(H.agentd_pids()[1], "sigkill")
    rpc.request("session/list", nil, function(err)
      got = { err = err }
    end)
    H.wait(10000, function()
      return got ~= nil
    end)
    assert.is_table(got.err)
    if got.err.code == require("agentd.transport").GONE then
      assert.matches("agentd exited %(signal 9%) before it answered", got.err.message)
    else
      assert.equals(-1, got.err.code) -- the write already failed: "the connection is closed"
    end
  end)
end)

describe("agentd.transport", function()
  local transport = require("agentd.transport")

  it("keeps the cause, not a usage text, and only the last lines", function()
    local lines = { "flag provided but not defined: -stdio", "Usage of agentd --stdio:", "  -cooldown duration" }
    assert.same({ "flag provided but not defined: -stdio" }, transport.excerpt(lines))
    local many = {}
    for i = 1, 10 do
      table.insert(many, "line " .. i)
    end
    assert.same({ "line 7", "line 8", "line 9", "line 10" }, transport.excerpt(many, 4))
    assert.same({ "usage: agentd <command>" }, transport.excerpt({ "usage: agentd <command>", "" }))
  end)

  it("fails a pending request when the program exits, with its exit code and stderr", function()
    local exited, got
    local c = assert(transport.start({ "sh", "-c", "read x; echo 'oops' >&2; exit 3" }, {
      on_notification = function() end,
      on_exit = function(code)
        exited = code
      end,
    }))
    assert.is_true((c.request("initialize", {}, function(err)
      got = err
    end)))
    H.wait(5000, function()
      return exited ~= nil and got ~= nil
    end)
    assert.equals(3, exited)
    assert.equals(transport.GONE, got.code)
    assert.matches("exit code 3", got.message)
    assert.same({ "oops" }, c.stderr())
    assert.is_false((c.request("x", {}, function() end)))
  end)

  it("says why a program cannot be run", function()
    local c, err = transport.start({ dir .. "/nothing-here" }, { on_notification = function() end, on_exit = function() end })
    assert.is_nil(c)
    assert.matches("ENOENT", err)
  end)
end)

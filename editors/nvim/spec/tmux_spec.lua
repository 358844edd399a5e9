-- What a person sees, in real terminals: two real Neovims in tmux, one after
-- the other, sharing agentd's daemon. The captured screens are printed, so
-- the CI log shows them.
local H = require("helpers")

local function sh(argv)
  local res = vim.system(argv, { text = true }):wait(30000)
  return res.stdout or "", res.code, res.stderr or ""
end

describe("two real Neovims in tmux", function()
  local sock, init
  before_each(function()
    H.fresh()
    assert(vim.fn.executable("tmux") == 1, "tmux is needed (ci.sh installs it)")
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir, "p")
    sock = dir .. "/tmux.sock"
    init = dir .. "/init.lua"
    local f = assert(io.open(init, "w"))
    f:write(([[
vim.opt.rtp:prepend(%q)
vim.cmd.runtime("plugin/agentd.lua")
require("agentd").setup({ cmd = %q, open_on_new = false })
vim.o.laststatus = 2
vim.o.statusline = "%%f %%= %%{%%v:lua.require'agentd'.statusline()%%} "
vim.o.shortmess = vim.o.shortmess .. "I"
]]):format(H.root, H.bin()))
    f:close()
  end)
  after_each(function()
    sh({ "tmux", "-S", sock, "kill-server" })
    H.stop_all()
  end)

  local function tmux(...)
    local out, code, err = sh({ "tmux", "-S", sock, ... })
    assert(code == 0, "tmux " .. table.concat({ ... }, " ") .. ": " .. err)
    return out
  end

  local function start(name)
    -- The pane's environment: agentd's socket and this run's state folder.
    tmux("new-session", "-d", "-s", name, "-x", "100", "-y", "30",
      "-e", "AGENTD_SOCKET=" .. H.socket(), "-e", "XDG_STATE_HOME=" .. vim.env.XDG_STATE_HOME,
      vim.v.progpath .. " -u " .. init .. " -i NONE -n")
  end

  local function screen(name)
    return tmux("capture-pane", "-p", "-t", name)
  end

  local function wait_screen(name, pattern, ms)
    local got
    H.wait(ms or 10000, function()
      got = screen(name)
      return got:find(pattern) ~= nil
    end, function()
      return ("pane %s never showed %q; it shows:\n%s"):format(name, pattern, got)
    end)
    return got
  end

  -- Waits, through the agentd CLI, until the daemon lists session id in
  -- state (it may not have been started yet).
  local function wait_state(id, state)
    local last
    H.wait(20000, function()
      local out = sh({ H.bin(), "ls", "--json" })
      local ok, list = pcall(vim.json.decode, out)
      for _, s in ipairs(ok and list.sessions or {}) do
        if s.sessionId == id then
          last = s.state
          return s.state == state
        end
      end
      return false
    end, function()
      return ("%s is %s, want %s"):format(id, tostring(last), state)
    end)
  end

  local function show(title, text)
    io.stdout:write(("--- %s\n%s\n"):format(title, (text:gsub("%s+$", ""))))
  end

  it("a cmd that exits at once: :Agentd new says why, and Enter leaves no window behind", function()
    local bad = vim.fn.fnamemodify(init, ":h") .. "/agentd-exits-2"
    vim.fn.writefile({ "#!/bin/sh", 'echo "agentd: cannot read rules: x.toml: line 3: bad key" >&2', "exit 2" }, bad)
    vim.uv.fs_chmod(bad, tonumber("755", 8))
    local f = assert(io.open(init, "w"))
    f:write(([[
vim.opt.rtp:prepend(%q)
vim.cmd.runtime("plugin/agentd.lua")
require("agentd").setup({ cmd = %q, autoconnect = false })
vim.o.laststatus = 2
vim.o.shortmess = vim.o.shortmess .. "I"
]]):format(H.root, bad))
    f:close()
    start("C")
    wait_screen("C", "%[No Name%]")
    tmux("send-keys", "-t", "C", ":Agentd new demo", "Enter")
    local said = wait_screen("C", "Press ENTER")
    show("Neovim with a cmd that exits 2, after :Agentd new demo", said)
    assert.matches("agentd did not start: it exited with code 2 before it answered initialize", said)
    assert.matches("command: " .. vim.pesc(bad) .. " %-%-stdio", said)
    assert.matches("stderr: agentd: cannot read rules: x%.toml: line 3: bad key", said)
    tmux("send-keys", "-t", "C", "Enter")
    local left = wait_screen("C", "%[No Name%]")
    vim.wait(300)
    left = screen("C")
    show("after Enter", left)
    -- One window: one statusline, no vertical separator.
    local _, statuslines = left:gsub("%[No Name%]", "")
    assert.equals(1, statuslines)
    assert.is_nil(left:find("│"))
  end)

  it("A starts an agent and quits; B's statusline counts it and :Agentd answer answers it", function()
    start("A")
    wait_screen("A", "%[No Name%]")
    tmux("send-keys", "-t", "A", ":Agentd new demo", "Enter")
    wait_state("s1", "idle")
    tmux("send-keys", "-t", "A", ":Agentd send s1", "Enter")
    wait_screen("A", "Send to agent:")
    tmux("send-keys", "-t", "A", "-l", "Add a NOTES.md file")
    tmux("send-keys", "-t", "A", "Enter")
    wait_state("s1", "blocked")
    show("Neovim A with the agent blocked", wait_screen("A", "● 1 blocked"))

    tmux("send-keys", "-t", "A", "Escape", ":qa!", "Enter")
    H.wait(10000, function()
      local _, c = sh({ "tmux", "-S", sock, "has-session", "-t", "A" })
      return c ~= 0
    end, function()
      return "Neovim A did not quit:\n" .. screen("A")
    end)
    local out = sh({ H.bin(), "ls" })
    show("agentd ls after Neovim A quit", out)
    assert.matches("s1 +Demo agent +demo +blocked", out)

    start("B")
    -- B connects at start (autoconnect): no command, and it counts A's agent.
    show("Neovim B as it starts", wait_screen("B", "● 1 blocked"))
    tmux("send-keys", "-t", "B", ":Agentd list", "Enter")
    show("Neovim B after :Agentd list", wait_screen("B", "s1 +blocked +Demo agent"))
    tmux("send-keys", "-t", "B", ":Agentd answer", "Enter")
    local choose = wait_screen("B", "1: ")
    show("Neovim B asks which option", choose)
    assert.matches("Do you want to proceed%?", choose)
    tmux("send-keys", "-t", "B", "1", "Enter")
    wait_state("s1", "done")
    show("Neovim B after the answer", wait_screen("B", "✓ 1 done"))
  end)
end)

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

  -- The captures a person would see, kept in tests/captures/ when
  -- AGENTD_NVIM_CAPTURES names that folder (tests/capture-notice.sh).
  local function keep(name, title, text)
    local dir = vim.env.AGENTD_NVIM_CAPTURES
    if dir and dir ~= "" then
      local lines = { "=== " .. title, "--- screen (100x30, tmux capture-pane):" }
      vim.list_extend(lines, vim.split(text:gsub("%s+$", ""), "\n", { plain = true }))
      vim.fn.writefile(lines, dir .. "/" .. name)
    end
  end

  it("the float shows what the prompt approves: the command; for an edit the diff rows, in diff colours", function()
    start("D")
    wait_screen("D", "%[No Name%]")
    tmux("send-keys", "-t", "D", ":Agentd new demo", "Enter")
    wait_state("s1", "idle")
    tmux("send-keys", "-t", "D", ":Agentd send s1", "Enter")
    wait_screen("D", "Send to agent:")
    tmux("send-keys", "-t", "D", "-l", "please run rm -rf build")
    tmux("send-keys", "-t", "D", "Enter")
    wait_state("s1", "blocked")
    local cmd = wait_screen("D", "command: rm %-rf build")
    show("Neovim with the demo agent asking to run a command", cmd)
    assert.matches("s1 Demo agent needs you", cmd)
    assert.matches("Do you want to proceed%?", cmd)
    keep("notice-command.txt", "the demo agent asks to run `rm -rf build` (task: please run rm -rf build): the notice", cmd)
    -- :Agentd answer's prompt names the command too.
    tmux("send-keys", "-t", "D", ":Agentd answer", "Enter")
    local choose = wait_screen("D", "1: Yes")
    show("Neovim asks which option", choose)
    assert.matches("Do you want to proceed%? — command: rm %-rf build", choose)
    keep("answer-command.txt", "then :Agentd answer: vim.ui.select's prompt names the command", choose)
    tmux("send-keys", "-t", "D", "1", "Enter")
    wait_state("s1", "done")

    -- Another agent asks to edit a file (the same one would be blocked
    -- again within agentd's attention cooldown: no new notice pops then).
    tmux("send-keys", "-t", "D", ":Agentd new demo", "Enter")
    wait_state("s2", "idle")
    tmux("send-keys", "-t", "D", ":Agentd send s2", "Enter")
    wait_screen("D", "Send to agent:")
    tmux("send-keys", "-t", "D", "-l", "edit NOTES.md")
    tmux("send-keys", "-t", "D", "Enter")
    wait_state("s2", "blocked")
    local diff = wait_screen("D", "%+Notes kept by the demo agent%.")
    show("Neovim with the demo agent asking to edit NOTES.md", diff)
    assert.matches("edit: NOTES%.md", diff)
    assert.matches("%-TODO: write these notes", diff)
    assert.matches("d: the diff", diff)
    keep("notice-edit.txt", "a second demo agent asks to edit NOTES.md (task: edit NOTES.md): the notice with the diff rows", diff)
    -- In colour: the added and removed rows are drawn unlike the context row.
    local colours = tmux("capture-pane", "-p", "-e", "-t", "D")
    -- The last colour change before a text on its row.
    local function colour_before(text)
      for line in colours:gmatch("[^\n]+") do
        local at = line:find(text, 1, true)
        if at then
          return line:sub(1, at - 1):match(".*(\27%[[%d;:]*m)") or ""
        end
      end
    end
    local add, del, ctx = colour_before("+Notes kept"), colour_before("-TODO: write"), colour_before("See README")
    assert.is_not_nil(add)
    assert.are_not.equal(add, del, "added and removed rows look alike")
    assert.are_not.equal(add, ctx, "added and context rows look alike")
    -- d in the notice opens the whole diff below, as a diff buffer.
    tmux("send-keys", "-t", "D", "C-w", "w")
    tmux("send-keys", "-t", "D", "d")
    local whole = wait_screen("D", "agentd://s2/diff")
    show("after d in the notice", whole)
    assert.matches("# s2 Demo agent: edit: NOTES%.md", whole)
    keep("notice-edit-d.txt", "then <C-w>w and d in the notice: the whole diff in a split below (filetype diff)", whole)
    tmux("send-keys", "-t", "D", ":Agentd answer s2", "Enter")
    wait_screen("D", "1: Yes")
    tmux("send-keys", "-t", "D", "1", "Enter")
    wait_state("s2", "done")
  end)
end)

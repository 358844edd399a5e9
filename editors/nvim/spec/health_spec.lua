local H = require("helpers")

local function checkhealth()
  vim.cmd("silent checkhealth agentd")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  return text
end

describe(":checkhealth agentd", function()
  after_each(function()
    H.stop_all()
  end)

  it("reports the binary, its version, the handshake and Neovim as OK", function()
    H.fresh()
    local text = checkhealth()
    assert.matches("OK Neovim 0%.1%d", text)
    assert.matches("OK found: " .. vim.pesc(H.bin()), text)
    assert.matches("OK version: agentd ", text)
    assert.matches("OK handshake: agentd [^,]+, protocol 1", text)
    assert.matches("agents with rules: [^\n]*demo", text)
    assert.matches("not connected", text)
    assert.is_nil(text:find("ERROR"))
    assert.is_nil(text:find("WARNING"))
    -- The check started no agentd for this Neovim, nor a daemon.
    assert.same({}, H.agentd_pids())
    assert.is_nil(H.daemon_pid())
  end)

  it("reports the running agentd and its sessions", function()
    local agentd = H.fresh()
    H.demo(agentd)
    local text = checkhealth()
    assert.matches("OK connected to agentd's daemon %(pid " .. H.daemon_pid() .. ", socket " .. vim.pesc(H.socket()) .. "%), 1 live session", text)
  end)

  it("says what to do when the binary is missing", function()
    H.fresh({ cmd = "/nonexistent/agentd" })
    local text = checkhealth()
    assert.matches("ERROR agentd: \"/nonexistent/agentd\" was not found", text)
    assert.matches("set cmd in require%('agentd'%)%.setup%(%)", text)
  end)
end)

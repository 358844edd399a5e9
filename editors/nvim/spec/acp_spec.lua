-- ACP agents from Neovim, against the real agentd and the real Copilot CLI
-- (the pinned agents, `make agents`): offline and with no login, Copilot
-- asks for one. Without the agents installed the spec is pending, unless
-- AGENTD_REQUIRE_AGENTS is set (make test), where it fails.
local H = require("helpers")

local function copilot()
  local cache = vim.env.AGENTD_AGENTS_CACHE
  if not cache or cache == "" then
    cache = vim.env.HOME .. "/.cache/agentd-agents"
  end
  return cache .. "/node_modules/.bin/copilot"
end

describe("an ACP agent", function()
  local agentd
  before_each(function()
    agentd = H.fresh()
  end)
  after_each(function()
    H.stop_all()
  end)

  it("that needs a login offers its methods with vim.ui.select and opens the login in a terminal buffer", function()
    local bin = copilot()
    if vim.fn.executable(bin) ~= 1 then
      if vim.env.AGENTD_REQUIRE_AGENTS and vim.env.AGENTD_REQUIRE_AGENTS ~= "" then
        error("Copilot CLI is not installed at " .. bin .. " (make agents installs it)")
      end
      pending("Copilot CLI is not installed at " .. bin)
      return
    end
    local home = vim.fn.tempname()
    vim.fn.mkdir(home, "p")
    local calls = H.stub_select(function(items)
      return items[1]
    end)
    -- A HOME of its own: no login of the machine's user is found.
    local env = { HOME = home, COPILOT_AUTO_UPDATE = "false", GH_TOKEN = vim.NIL, GITHUB_TOKEN = vim.NIL }
    -- As on a person's desktop, not the CI runner running this: Copilot
    -- 1.0.102's login uses a device code (offline it fails at once) instead
    -- of a browser when any of these is set (cmd/agentd/acplogin_test.go's
    -- copilotDeviceMarkers, the same list).
    for _, k in ipairs({ "CI", "BUILD_NUMBER", "RUN_ID", "CODESPACES", "SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY" }) do
      env[k] = vim.NIL
    end
    local result
    agentd.new({
      argv = { bin, "--acp" },
      protocol = "acp",
      env = env,
    }, function(err, s)
      result = { err = err, s = s }
    end)
    H.wait(60000, function()
      return result ~= nil
    end, function()
      return ("no spawn result; %d select calls"):format(#calls)
    end)
    assert.is_nil(result.err)
    assert.equals(1, #calls)
    assert.equals("agentd.login", calls[1].opts.kind)
    assert.matches("Copilot needs you to log in: Authentication required", calls[1].opts.prompt)
    assert.same({ "Log in with Copilot CLI — Run `copilot login` in the terminal" }, calls[1].shown)
    local s = result.s
    assert.equals("error", s.state)
    assert.equals("acp.login", s.reason)
    assert.is_string(s.loginSessionId)
    -- The login agentd runs is the real `copilot login`, in a terminal
    -- buffer; offline it waits for a browser that never comes.
    local function login_text()
      local buf = require("agentd.terminal").buffer(s.loginSessionId)
      return buf and table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") or ""
    end
    H.wait(60000, function()
      return login_text():find("Waiting for authorization", 1, true) ~= nil
    end, function()
      return "no copilot login in the terminal buffer:\n" .. login_text()
    end)
    -- Stopping the login ends the agent's session, saying why.
    agentd.kill(s.loginSessionId)
    H.wait_state(s.id, "exited", 30000)
    assert.equals("acp.login_failed", H.session(s.id).reason)
  end)

  it("shows what a permission is about when its question does not say it", function()
    local ui = require("agentd.ui")
    assert.equals("Allow? — command: touch a.txt", ui.prompt_text({ question = "Allow?", subject = { kind = "command", text = "touch a.txt" } }))
    assert.equals("`touch a.txt`", ui.prompt_text({ question = "`touch a.txt`", subject = { kind = "command", text = "touch a.txt" } }))
    assert.equals("read: /etc/hosts", ui.prompt_text({ question = "", subject = { kind = "read", text = "/etc/hosts" } }))
    assert.equals("Do you want to proceed?", ui.prompt_text({ question = "Do you want to proceed?" }))
  end)
end)

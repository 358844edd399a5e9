local H = require("helpers")

describe("plugin/agentd.lua", function()
  before_each(function()
    H.fresh()
  end)

  it("defines :Agentd and loads nothing, starts nothing, until it runs", function()
    for name in pairs(package.loaded) do
      if name == "agentd" or name:match("^agentd%.") then
        package.loaded[name] = nil
      end
    end
    vim.g.loaded_agentd = nil
    vim.api.nvim_del_user_command("Agentd")
    pcall(vim.api.nvim_del_augroup_by_name, "agentd")
    vim.cmd.runtime("plugin/agentd.lua")
    assert.equals(2, vim.fn.exists(":Agentd"))
    assert.is_nil(package.loaded["agentd"])
    assert.is_nil(package.loaded["agentd.rpc"])
    assert.is_false(pcall(vim.api.nvim_get_autocmds, { group = "agentd" }))
    assert.same({}, H.agentd_pids())
    -- setup() starts nothing either: agentd starts with the first command.
    require("agentd").setup({ cmd = H.bin() })
    assert.same({}, H.agentd_pids())
    assert.is_false(require("agentd.rpc").running())
  end)

  it("completes subcommands, agent names and session ids", function()
    assert.same({ "answer" }, vim.fn.getcompletion("Agentd an", "cmdline"))
    assert.same({ "dismiss" }, vim.fn.getcompletion("Agentd di", "cmdline"))
    local agents = vim.fn.getcompletion("Agentd new ", "cmdline")
    assert.is_true(vim.tbl_contains(agents, "demo"))
    assert.is_true(vim.tbl_contains(agents, "claude"))
    require("agentd.sessions").upsert({ sessionId = "s7", state = "idle", since = "2026-11-30T04:00:00Z" })
    assert.same({ "s7" }, vim.fn.getcompletion("Agentd open s", "cmdline"))
  end)

  it("names the unknown subcommand", function()
    local notes = H.notes()
    vim.cmd("Agentd frobnicate")
    assert.matches('unknown subcommand "frobnicate"', notes[1].msg)
  end)

  it("takes the visual selection for :'<,'>Agentd send", function()
    vim.api.nvim_buf_set_lines(0, 0, -1, false, { "first line", "second line", "third" })
    vim.cmd("normal! gg0wvj$\27") -- from "line" on line 1 to the end of line 2
    local sel = require("agentd.commands")._selected_text({ range = 2, line1 = 1, line2 = 2 })
    assert.equals("line\nsecond line", sel)
    vim.cmd("normal! ggVG\27")
    sel = require("agentd.commands")._selected_text({ range = 2, line1 = 1, line2 = 3 })
    assert.equals("first line\nsecond line\nthird", sel)
    assert.is_nil(require("agentd.commands")._selected_text({ range = 0 }))
  end)
end)

describe("doc/agentd.txt", function()
  it("builds help tags without duplicates and every |link| resolves", function()
    local dir = vim.fn.tempname() .. "/doc"
    vim.fn.mkdir(dir, "p")
    vim.fn.writefile(vim.fn.readfile(H.root .. "/doc/agentd.txt"), dir .. "/agentd.txt")
    vim.cmd.helptags(dir) -- errors on a duplicate tag
    local tags = {}
    for _, line in ipairs(vim.fn.readfile(dir .. "/tags")) do
      tags[line:match("^[^\t]+")] = true
    end
    for _, t in ipairs({ "agentd.txt", "agentd-config", ":Agentd-answer", "agentd.statusline()", "agentd-highlights" }) do
      assert.is_true(tags[t], t)
    end
    local text = table.concat(vim.fn.readfile(dir .. "/agentd.txt"), "\n")
    for link in text:gmatch("|([^|%s]+)|") do
      if link:match("^agentd") or link:match("^:Agentd") then
        assert.is_true(tags[link] == true, "no tag for |" .. link .. "|")
      end
    end
  end)
end)

-- :Agentd, defined here so it exists before setup(); nothing is loaded
-- (and agentd is not started) until the command runs.
if vim.g.loaded_agentd then
  return
end
vim.g.loaded_agentd = 1

if vim.fn.has("nvim-0.10") == 0 then
  vim.api.nvim_create_user_command("Agentd", function()
    vim.notify("agentd.nvim needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  end, { nargs = "*" })
  return
end

vim.api.nvim_create_user_command("Agentd", function(args)
  require("agentd.commands").run(args)
end, {
  nargs = "*",
  range = true,
  bang = true,
  desc = "agentd: start, list, open, answer, send to and kill coding agents",
  complete = function(arglead, cmdline)
    return require("agentd.commands").complete(arglead, cmdline)
  end,
})

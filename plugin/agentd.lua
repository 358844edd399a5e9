-- The Neovim plugin lives in editors/nvim. This file lets a plugin manager
-- (lazy.nvim, packadd) take the repository itself as the plugin: it puts
-- editors/nvim on 'runtimepath' and sources its plugin file, which defines
-- :Agentd and loads nothing else.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:gsub("^@", ""), ":p:h:h")
local dir = root .. "/editors/nvim"
if not vim.tbl_contains(vim.api.nvim_list_runtime_paths(), dir) then
  vim.opt.runtimepath:append(dir)
end
vim.cmd.source(vim.fn.fnameescape(dir .. "/plugin/agentd.lua"))

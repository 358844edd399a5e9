-- lazy.nvim runs a plugin's build.lua after installing or updating it: this
-- one installs agentd (editors/nvim/lua/agentd/install.lua; :Agentd install
-- does the same).
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:gsub("^@", ""), ":p:h")
local dir = root .. "/editors/nvim"
if not vim.tbl_contains(vim.api.nvim_list_runtime_paths(), dir) then
  vim.opt.runtimepath:append(dir)
end
require("agentd.install").build()

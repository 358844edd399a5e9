-- Runs busted inside headless Neovim:
--   timeout 300 nvim --headless -u NONE -i NONE -n -l tests/busted.lua [busted args] spec
-- Debian's lua-busted supplies busted; the plugin is put on 'runtimepath'.
-- The last line printed is "N passed, N failed" (tests/output.lua).
local root = vim.fn.fnamemodify(arg[0], ":p:h:h")
package.path = table.concat({
  root .. "/spec/?.lua",
  "/usr/share/lua/5.1/?.lua",
  "/usr/share/lua/5.1/?/init.lua",
  package.path,
}, ";")
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath

vim.opt.runtimepath:prepend(root)
vim.opt.packpath = ""
vim.o.swapfile = false
vim.o.shadafile = "NONE"
-- Each run gets its own state dir: agentd's log and Neovim's LSP log (where
-- agentd's stderr goes) land there. $AGENTD_NVIM_STATE keeps it for reading.
local state = vim.env.AGENTD_NVIM_STATE
if not state or state == "" then
  state = vim.fn.tempname()
end
vim.env.XDG_STATE_HOME = state
vim.env.AGENTD_NVIM_ROOT = root
-- The specs' agentd daemon lives in a folder of this run, never the user's.
if not vim.env.AGENTD_SOCKET or vim.env.AGENTD_SOCKET == "" then
  vim.env.AGENTD_SOCKET = state .. "/run/agentd.sock"
end

local args = { "--output=" .. root .. "/tests/output.lua" }
vim.list_extend(args, arg)
_G.arg = args
-- On failures busted raises error() with no message (its way to exit 1 under Lua 5.1).
local ok, err = pcall(require("busted.runner"), { standalone = false, output = root .. "/tests/output.lua" })
if not ok and err ~= nil then
  io.stderr:write("busted: ", tostring(err), "\n")
end
vim.cmd(ok and "qall!" or "cquit! 1")

-- Tells agentd whether the person is looking at this Neovim (client/focus):
-- agentd raises a desktop notice only while no client is focused, and none
-- while a connected client's desktop_notifications option is false.
--
-- Neovim learns of focus from FocusGained/FocusLost, which a terminal sends
-- only with focus reporting on (most do; in tmux: `set -g focus-events on`).
-- Until it hears otherwise, a Neovim counts as focused: it was just started
-- or used by the person in front of it.
local protocol = require("agentd.protocol")
local config = require("agentd.config")
local rpc = require("agentd.rpc")

local M = {}

local focused = true

local function params()
  return { focused = focused, desktopNotifications = config.get().desktop_notifications }
end

---Tells the connected agentd (after initialize, and after each reconnect).
function M.send()
  if rpc.server() then
    rpc.notify(protocol.methods.focus, params())
  end
  -- Other hosts' connections too, when any is configured.
  require("agentd.hosts").notify_all(protocol.methods.focus, params())
end

---The terminal reported focus in or out.
---@param yes boolean
function M.set(yes)
  if focused == yes then
    return
  end
  focused = yes
  M.send()
end

---@return boolean
function M.focused()
  return focused
end

---Sets up the FocusGained/FocusLost autocmds in augroup.
---@param augroup integer
function M.watch(augroup)
  vim.api.nvim_create_autocmd({ "FocusGained", "FocusLost" }, {
    group = augroup,
    callback = function(ev)
      M.set(ev.event == "FocusGained")
    end,
  })
end

return M

-- The statusline component: sessions counted per state, each state in its
-- own highlight group so a colour scheme can style it.
local config = require("agentd.config")
local sessions = require("agentd.sessions")

local M = {}

local function capital(state)
  return state:sub(1, 1):upper() .. state:sub(2)
end

---The highlight group of a state: AgentdBlocked, AgentdWorking, …
function M.group(state)
  return "Agentd" .. capital(state)
end

---The statusline group of a state: AgentdStatusBlocked, … (linked to the above).
function M.status_group(state)
  return "AgentdStatus" .. capital(state)
end

local links = {
  blocked = "DiagnosticWarn",
  error = "DiagnosticError",
  done = "DiagnosticOk",
  working = "DiagnosticInfo",
  idle = "Comment",
  exited = "NonText",
}

---Defines the groups as links (default = true: a scheme's own wins).
---Linked, the statusline counts keep the state's colours as a small badge,
---readable on light and dark bars alike.
function M.define_highlights()
  for state, target in pairs(links) do
    vim.api.nvim_set_hl(0, M.group(state), { link = target, default = true })
    vim.api.nvim_set_hl(0, M.status_group(state), { link = M.group(state), default = true })
  end
  vim.api.nvim_set_hl(0, "AgentdNotice", { link = "NormalFloat", default = true })
  vim.api.nvim_set_hl(0, "AgentdNoticeBorder", { link = "FloatBorder", default = true })
  vim.api.nvim_set_hl(0, "AgentdNoticeTitle", { link = "Title", default = true })
  vim.api.nvim_set_hl(0, "AgentdNoticeQuestion", { link = "Question", default = true })
  -- What the prompt approves, and its diff rows.
  vim.api.nvim_set_hl(0, "AgentdNoticeSubject", { link = "Special", default = true })
  vim.api.nvim_set_hl(0, "AgentdNoticeDetail", { link = "AgentdNoticeSubject", default = true })
  vim.api.nvim_set_hl(0, "AgentdNoticeWarn", { link = "DiagnosticWarn", default = true })
  vim.api.nvim_set_hl(0, "AgentdNoticeDiffAdd", { link = "DiffAdd", default = true })
  vim.api.nvim_set_hl(0, "AgentdNoticeDiffDelete", { link = "DiffDelete", default = true })
  vim.api.nvim_set_hl(0, "AgentdNoticeDiffHunk", { link = "Statement", default = true })
  vim.api.nvim_set_hl(0, "AgentdNoticeDiffFile", { link = "Type", default = true })
  vim.api.nvim_set_hl(0, "AgentdNoticeDiffContext", { link = "AgentdNotice", default = true })
end

---@class agentd.StatuslineOpts
---@field highlights boolean|nil  false: plain text (for lualine and friends)
---@field labels boolean|nil
---@field states string[]|nil
---@field separator string|nil
---@field prefix string|nil

---The component's text: "● 1 blocked ◐ 2 working", "" with no sessions.
---@param opts agentd.StatuslineOpts|nil
---@return string
function M.render(opts)
  local c = config.get().statusline
  opts = opts or {}
  local counts = sessions.counts()
  local labels = opts.labels
  if labels == nil then
    labels = c.labels
  end
  local hl = opts.highlights ~= false
  local parts = {}
  for _, state in ipairs(opts.states or c.states) do
    local n = counts[state] or 0
    if n > 0 then
      local text = ("%s %d"):format(c.icons[state] or state, n)
      if labels then
        text = text .. " " .. state
      end
      if hl then
        text = ("%%#%s#%s%%*"):format(M.status_group(state), text)
      end
      table.insert(parts, text)
    end
  end
  if #parts == 0 then
    return ""
  end
  return (opts.prefix or c.prefix) .. table.concat(parts, opts.separator or c.separator)
end

return M

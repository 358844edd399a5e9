-- :Agentd {subcommand} — each maps to one call of the public API.
local M = {}

local function agentd()
  return require("agentd")
end

---The text a :'<,'>Agentd send was given: the visual selection when the
---range is the last one (charwise or blockwise as selected), else the lines.
local function selected_text(args)
  if args.range == 0 then
    return nil
  end
  local s, e = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  local mode = vim.fn.visualmode()
  if args.range == 2 and s[2] == args.line1 and e[2] == args.line2 and mode ~= "" and vim.fn.exists("*getregion") == 1 then
    return table.concat(vim.fn.getregion(s, e, { type = mode }), "\n")
  end
  return table.concat(vim.api.nvim_buf_get_lines(0, args.line1 - 1, args.line2, false), "\n")
end
M._selected_text = selected_text

M.subcommands = {
  new = {
    complete = function()
      return agentd()._agent_names()
    end,
    run = function(args)
      local name = args.fargs[2]
      if not name and not require("agentd.config").get().default_agent then
        vim.ui.select(agentd()._agent_names(), { prompt = "Start which agent?", kind = "agentd.agent" }, function(choice)
          if choice then
            agentd().new(choice)
          end
        end)
        return
      end
      -- NAME [ARGS…]: an agent by name, or any program (a path or a name
      -- on $PATH) with its arguments, run as that argv.
      agentd().new(name, nil, vim.list_slice(args.fargs, 3))
    end,
  },
  list = {
    run = function()
      agentd().list()
    end,
  },
  answer = {
    complete = "session",
    run = function(args)
      agentd().answer(args.fargs[2])
    end,
  },
  show = {
    complete = "session",
    run = function(args)
      agentd().show(args.fargs[2])
    end,
  },
  open = {
    complete = "session",
    run = function(args)
      agentd().open(args.fargs[2])
    end,
  },
  send = {
    complete = "session",
    run = function(args)
      local key = args.fargs[2]
      local text = selected_text(args)
      if text then
        return agentd().send(text, key)
      end
      vim.ui.input({ prompt = "Send to agent: " }, function(input)
        if input and input ~= "" then
          agentd().send(input, key)
        end
      end)
    end,
  },
  kill = {
    complete = "session",
    run = function(args)
      agentd().kill(args.fargs[2], args.bang and "KILL" or nil)
    end,
  },
  dismiss = {
    run = function()
      agentd().dismiss()
    end,
  },
  log = {
    run = function()
      agentd().log()
    end,
  },
  stop = {
    run = function(args)
      agentd().stop(args.bang)
    end,
  },
  install = {
    run = function()
      require("agentd.install").command()
    end,
  },
}

---Runs :Agentd with the user-command args table.
function M.run(args)
  local name = args.fargs[1] or "list"
  if name:sub(-1) == "!" then
    -- ":Agentd stop!" reads as well as ":Agentd! stop".
    name, args.bang = name:sub(1, -2), true
  end
  local sub = M.subcommands[name]
  if not sub then
    require("agentd.ui").notify(
      ("agentd: unknown subcommand %q; try one of: %s"):format(name, table.concat(M.names(), ", ")),
      vim.log.levels.ERROR
    )
    return
  end
  sub.run(args)
end

function M.names()
  local names = vim.tbl_keys(M.subcommands)
  table.sort(names)
  return names
end

---Completion for :Agentd.
function M.complete(arglead, cmdline)
  local words = vim.split(cmdline:sub(1, #cmdline - #arglead), "%s+", { trimempty = true })
  -- words[1] is the command itself (with any range before it).
  local candidates
  if #words <= 1 then
    candidates = M.names()
  elseif #words == 2 then
    local sub = M.subcommands[words[2]]
    if sub and sub.complete == "session" then
      candidates = {}
      for _, s in ipairs(require("agentd.sessions").list()) do
        table.insert(candidates, require("agentd.sessions").key(s))
      end
    elseif sub and type(sub.complete) == "function" then
      candidates = sub.complete()
    end
  end
  return vim.tbl_filter(function(c)
    return vim.startswith(c, arglead)
  end, candidates or {})
end

return M

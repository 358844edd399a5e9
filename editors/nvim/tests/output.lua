-- busted output: one line per test (ok / FAIL / ERROR, with its time), the
-- failures in full, and a last line "N passed, N failed" that CI reads.
return function(options)
  local busted = require("busted")
  local handler = require("busted.outputHandlers.base")()
  local started = {}

  local function out(s)
    io.stdout:write(s, "\n")
    io.stdout:flush()
  end

  handler.testStart = function(element)
    started[element] = vim.uv.hrtime()
    return nil, true
  end

  handler.testEnd = function(element, parent, status)
    local ms = started[element] and (vim.uv.hrtime() - started[element]) / 1e6 or 0
    local mark = ({ success = "ok   ", failure = "FAIL ", error = "ERROR", pending = "skip " })[status] or status
    out(("%s %s (%d ms)"):format(mark, handler.getFullName(element), ms))
    return nil, true
  end

  local function describe(f)
    local where = f.element and f.element.trace and f.element.trace.short_src
      and (f.element.trace.short_src .. ":" .. tostring(f.element.trace.currentline))
      or ""
    local msg = type(f.message) == "string" and f.message or vim.inspect(f.message)
    local trace = options.verbose and f.trace and f.trace.traceback or ""
    return ("%s %s\n  %s\n%s"):format(f.name, where, msg:gsub("\n", "\n  "), trace)
  end

  handler.suiteEnd = function()
    for _, f in ipairs(handler.failures) do
      out("\nFAILURE: " .. describe(f))
    end
    for _, f in ipairs(handler.errors) do
      out("\nERROR: " .. describe(f))
    end
    local failed = handler.failuresCount + handler.errorsCount
    out(("%d passed, %d failed"):format(handler.successesCount, failed))
    return nil, true
  end

  busted.subscribe({ "test", "start" }, handler.testStart, { predicate = handler.cancelOnPending })
  busted.subscribe({ "test", "end" }, handler.testEnd, { predicate = handler.cancelOnPending })
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  return handler
end

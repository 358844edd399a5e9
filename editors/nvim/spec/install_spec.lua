-- :Agentd install (lazy.nvim's build step), each case in a fresh HOME and
-- XDG folders: with Go it builds agentd from this checkout; without Go on
-- $PATH it installs the release tarball from a local folder that
-- agentd-dist made (ci.sh makes it once per run: $AGENTD_DIST), checked
-- against SHA256SUMS; a tampered tarball is refused and nothing is
-- installed. :checkhealth agentd is captured in each case
-- (tests/captures/install-*.txt).
local H = require("helpers")

local DIST_VERSION = vim.env.AGENTD_DIST_VERSION or "0.0.1-spec"
local ENV = { "HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "PATH", "GOCACHE", "GOMODCACHE", "GOPATH" }
local saved = {}
local dist, repo, home, plat

local function sh(argv, opts)
  local res = vim.system(argv, vim.tbl_extend("force", { text = true }, opts or {})):wait(600000)
  assert(res.code == 0, ("%s: exit %d\n%s%s"):format(table.concat(argv, " "), res.code, res.stdout or "", res.stderr or ""))
  return res.stdout
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

---A fresh HOME with the XDG folders in it, as a new user has.
local function fresh_home()
  home = vim.fn.tempname() .. "-home"
  vim.fn.mkdir(home, "p")
  vim.env.HOME = home
  vim.env.XDG_DATA_HOME = home .. "/.local/share"
  vim.env.XDG_CONFIG_HOME = home .. "/.config"
  vim.env.XDG_CACHE_HOME = home .. "/.cache"
  vim.env.XDG_STATE_HOME = home .. "/.local/state"
  vim.env.PATH = saved.PATH
  return home
end

---$PATH without the folders that hold go (or an agentd).
local function path_without_go()
  local keep = {}
  for _, dir in ipairs(vim.split(saved.PATH, ":", { trimempty = true })) do
    if vim.fn.executable(dir .. "/go") == 0 and vim.fn.executable(dir .. "/agentd") == 0 then
      table.insert(keep, dir)
    end
  end
  vim.env.PATH = table.concat(keep, ":")
  assert.equals(0, vim.fn.executable("go"), "go is still on PATH: " .. vim.env.PATH)
end

local function checkhealth()
  vim.cmd("silent checkhealth agentd")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  return text
end

---Writes a capture: what the install said, then :checkhealth agentd, with
---the fresh HOME shown as ~ and the checkout and release folder by name.
local function capture(name, title, lines, health, names)
  local function clean(s)
    for from, to in pairs(names or {}) do
      s = s:gsub(vim.pesc(from), to)
    end
    s = s:gsub(vim.pesc(home), "~"):gsub(vim.pesc(repo), "<checkout>"):gsub(vim.pesc(dist), "<release folder>")
    s = s:gsub(vim.pesc(vim.fn.fnamemodify(H.socket(), ":h")), "<specs' run folder>")
    return s
  end
  local v = vim.version()
  local out = {
    ("# %s"):format(title),
    ("# Made by spec/install_spec.lua in headless Neovim %d.%d.%d, in a fresh HOME (~)."):format(v.major, v.minor, v.patch),
    "",
    "## what :Agentd install said",
  }
  for _, l in ipairs(lines) do
    for _, x in ipairs(vim.split(clean(l), "\n")) do
      table.insert(out, x)
    end
  end
  vim.list_extend(out, { "", "## :checkhealth agentd" })
  for _, l in ipairs(vim.split(clean(health), "\n")) do
    table.insert(out, (l:gsub("%s+$", "")))
  end
  vim.fn.writefile(out, H.root .. "/tests/captures/" .. name)
end

---Sets the plugin up as a person would: no cmd, so the installed binary.
local function setup_without_cmd(opts)
  require("agentd").setup(vim.tbl_deep_extend("force", { open_on_new = false, autoconnect = false }, opts or {}))
end

---Serves the files of folder over HTTP at 127.0.0.1 (GET only), from this
---Neovim's event loop (curl runs while :wait() turns it). Returns the base
---URL and a function that stops it.
local function serve(folder)
  local server = vim.uv.new_tcp()
  server:bind("127.0.0.1", 0)
  local requests = {}
  server:listen(8, function()
    local c = vim.uv.new_tcp()
    server:accept(c)
    local buf = ""
    c:read_start(function(_, chunk)
      if not chunk then
        return c:close()
      end
      buf = buf .. chunk
      if not buf:find("\r\n\r\n") then
        return
      end
      c:read_stop()
      local path = buf:match("^GET (/%S*) HTTP")
      table.insert(requests, path or "?")
      local file = path and path:match("^/download/([%w._-]+)$")
      local f = file and io.open(folder .. "/" .. file, "rb")
      local head, body
      if f then
        body = f:read("*a")
        f:close()
        head = ("HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"):format(#body)
      else
        body = "not found"
        head = "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\n"
      end
      c:write(head .. body, function()
        c:shutdown(function()
          c:close()
        end)
      end)
    end)
  end)
  local port = server:getsockname().port
  return ("http://127.0.0.1:%d/download"):format(port), requests, function()
    server:close()
  end
end

local function install_log()
  local said = {}
  return said, function(msg)
    table.insert(said, "agentd: " .. msg)
  end
end

describe(":Agentd install", function()
  setup(function()
    for _, k in ipairs(ENV) do
      saved[k] = vim.env[k]
    end
    -- Go keeps the machine's module and build caches: the fresh HOME is
    -- the plugin's, not a new Go toolchain's.
    local goenv = vim.json.decode(sh({ "go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH" }))
    vim.env.GOCACHE, vim.env.GOMODCACHE, vim.env.GOPATH = goenv.GOCACHE, goenv.GOMODCACHE, goenv.GOPATH
    repo = vim.fn.fnamemodify(H.root, ":h:h")
    local os_name, arch = require("agentd.install").platform()
    plat = os_name .. "/" .. arch
    dist = vim.env.AGENTD_DIST
    if not dist or dist == "" then
      dist = vim.fn.tempname() .. "-dist"
      sh({ "go", "run", "./cmd/agentd-dist", "-out", dist, "-version", DIST_VERSION, "-platforms", plat }, { cwd = repo })
    end
    dist = vim.fn.fnamemodify(dist, ":p"):gsub("/$", "")
    assert(vim.uv.fs_stat(dist .. "/SHA256SUMS"), "no SHA256SUMS in " .. dist)
  end)

  teardown(function()
    for _, k in ipairs(ENV) do
      vim.env[k] = saved[k]
    end
  end)

  after_each(function()
    H.stop_all()
    vim.env.PATH = saved.PATH
  end)

  it("with Go, builds agentd from this checkout, and the plugin runs it when cmd is not set", function()
    fresh_home()
    H.fresh()
    setup_without_cmd()
    local install = require("agentd.install")
    assert.is_nil(vim.uv.fs_stat(install.bin()))
    local said, log = install_log()
    local res = install.run({ log = log })
    local bin = home .. "/.local/share/nvim/agentd/bin/agentd"
    assert.equals(bin, install.bin())
    assert.equals(bin, res.path)
    assert.equals("go", res.source)
    assert.equals(repo, res.from)
    assert.equals(1, vim.fn.executable(bin))
    local v = vim.json.decode(sh({ bin, "version", "--json" }))
    assert.equals(res.version, v.version)
    assert.equals(1, v.protocol)
    -- Stamped as make build stamps it, whatever GOFLAGS says about VCS stamping.
    local rev = vim.trim(sh({ "git", "-C", repo, "rev-parse", "HEAD" }))
    assert.equals(rev, v.commit)
    assert.matches(vim.pesc(rev:sub(1, 12)), v.version)
    assert.matches("building agentd with .*go in " .. vim.pesc(repo), said[1])
    assert.matches("installed agentd " .. vim.pesc(v.version) .. " %(protocol 1%) at " .. vim.pesc(bin) .. ", built with Go", said[#said])
    -- Nothing is left beside it: no temporary file, no staging folder.
    assert.same({ "bin", "install.json" }, vim.fn.readdir(home .. "/.local/share/nvim/agentd"))
    assert.same({ "agentd" }, vim.fn.readdir(home .. "/.local/share/nvim/agentd/bin"))

    -- cmd not set: the plugin runs the installed agentd, which starts the daemon.
    assert.same({ bin }, require("agentd.config").command())
    local text = checkhealth()
    assert.matches("OK found: " .. vim.pesc(bin) .. " %(installed by :Agentd install, built with Go from " .. vim.pesc(repo) .. "%)", text)
    assert.matches("OK version: agentd " .. vim.pesc(v.version) .. " %(protocol 1, ", text)
    assert.matches("not connected, and no agentd daemon is running; the first :Agentd command starts one from " .. vim.pesc(bin), text)
    assert.is_nil(text:find("ERROR"))
    H.demo(require("agentd")) -- waits for the demo agent to be idle
    local pid = H.daemon_pid()
    assert.equals(bin, vim.uv.fs_readlink("/proc/" .. pid .. "/exe"))
    text = checkhealth()
    assert.matches("OK connected to agentd's daemon %(pid " .. pid, text)
    assert.matches("OK daemon: agentd " .. vim.pesc(v.version) .. ", the same version as " .. vim.pesc(bin), text)
    assert.is_nil(text:find("ERROR"))
    assert.is_nil(text:find("WARNING"))
    capture("install-go.txt", ":Agentd install with Go on $PATH: built from the checkout; then a demo agent started", said, text)
  end)

  it("without Go on $PATH, installs the release tarball from a local folder, checked against SHA256SUMS", function()
    fresh_home()
    -- A daemon of another build (ci.sh's agentd) runs, with an agent, and
    -- this Neovim is connected to it: then agentd is installed.
    local agentd = H.fresh()
    H.demo(agentd)
    local daemon = H.daemon_pid()
    local old = vim.json.decode(sh({ H.bin(), "version", "--json" })).version
    path_without_go()
    setup_without_cmd({ install = { from = dist } })
    local install = require("agentd.install")
    local said, log = install_log()
    local res = install.run({ log = log })
    local bin = home .. "/.local/share/nvim/agentd/bin/agentd"
    local tarball = ("agentd_%s_%s.tar.gz"):format(DIST_VERSION, plat:gsub("/", "_"))
    assert.equals("release", res.source)
    assert.equals(DIST_VERSION, res.version)
    assert.equals(dist .. "/" .. tarball, res.from)
    assert.equals(require("agentd.install").parse_sums(read(dist .. "/SHA256SUMS"))[tarball], res.sha256)
    assert.matches("taking the " .. vim.pesc(plat) .. " release from " .. vim.pesc(dist), said[1])
    assert.matches(vim.pesc(tarball) .. ": SHA%-256 %x+ matches SHA256SUMS", said[2])
    assert.equals(DIST_VERSION, vim.json.decode(sh({ bin, "version", "--json" })).version)
    assert.same({ "bin", "install.json" }, vim.fn.readdir(home .. "/.local/share/nvim/agentd"))
    assert.same({ "agentd" }, vim.fn.readdir(home .. "/.local/share/nvim/agentd/bin"))

    local text = checkhealth()
    assert.matches("OK found: " .. vim.pesc(bin) .. " %(installed by :Agentd install from " .. vim.pesc(dist .. "/" .. tarball) .. "%)", text)
    assert.matches("OK version: agentd " .. vim.pesc(DIST_VERSION) .. " %(protocol 1, ", text)
    assert.matches("OK handshake: agentd " .. vim.pesc(DIST_VERSION) .. ", protocol 1", text)
    -- The daemon is the other build: said, with what to do.
    assert.matches("OK connected to agentd's daemon %(pid " .. daemon, text)
    assert.matches(
      "WARNING versions differ: the daemon %(pid " .. daemon .. "%) runs agentd " .. vim.pesc(old) .. ", " .. vim.pesc(bin) .. " is agentd " .. vim.pesc(DIST_VERSION),
      text
    )
    assert.matches("If agentd " .. vim.pesc(DIST_VERSION) .. " is the newer, `" .. vim.pesc(bin) .. " upgrade` hands the running agents to it without ending them", text)
    assert.matches("once they have ended, `agentd stop` %(or :Agentd stop%); the next :Agentd command starts the daemon from " .. vim.pesc(bin), text)
    assert.matches("`agentd stop %-%-force` %(:Agentd stop!%) does it now, and ends every running agent", text)
    assert.is_nil(text:find("ERROR"))
    capture(
      "install-release.txt",
      ":Agentd install without Go on $PATH, install.from = a folder `make dist` wrote; a daemon of another build runs",
      said,
      text
    )
  end)

  it("without Go on $PATH, downloads the release from a URL (curl), checked against SHA256SUMS", function()
    fresh_home()
    H.fresh()
    path_without_go()
    local url, requests, stop = serve(dist)
    setup_without_cmd({ install = { from = url } })
    local install = require("agentd.install")
    local said, log = install_log()
    local ok, res = pcall(install.run, { log = log })
    stop()
    assert(ok, res)
    local tarball = ("agentd_%s_%s.tar.gz"):format(DIST_VERSION, plat:gsub("/", "_"))
    assert.same({ "/download/SHA256SUMS", "/download/" .. tarball }, requests)
    assert.equals("release", res.source)
    assert.equals(url .. "/" .. tarball, res.from)
    assert.equals(DIST_VERSION, vim.json.decode(sh({ install.bin(), "version", "--json" })).version)
    assert.matches("SHA%-256 %x+ matches SHA256SUMS", said[2])
    -- A URL with no release there says which file it could not get.
    url, requests, stop = serve(vim.fn.tempname())
    ok, res = pcall(install.run, { from = url, log = function() end })
    stop()
    assert.is_false(ok)
    assert.matches("^agentd install: could not download " .. vim.pesc(url) .. "/SHA256SUMS: curl: %(22%)", res)
    assert.equals(DIST_VERSION, vim.json.decode(sh({ install.bin(), "version", "--json" })).version)
  end)

  it("refuses a tampered tarball: the checksum differs, nothing is installed, an installed agentd stays", function()
    fresh_home()
    H.fresh()
    path_without_go()
    -- The release folder with its tarball swapped for another that holds
    -- a different "agentd"; SHA256SUMS as published.
    local bad = vim.fn.tempname() .. "-tampered"
    vim.fn.mkdir(bad, "p")
    local tarball = ("agentd_%s_%s.tar.gz"):format(DIST_VERSION, plat:gsub("/", "_"))
    local top = tarball:gsub("%.tar%.gz$", "")
    vim.fn.mkdir(bad .. "/src/" .. top, "p")
    vim.fn.writefile({ "#!/bin/sh", 'echo \'{"version":"evil","protocol":1}\'' }, bad .. "/src/" .. top .. "/agentd")
    vim.uv.fs_chmod(bad .. "/src/" .. top .. "/agentd", tonumber("755", 8))
    sh({ "tar", "-czf", bad .. "/" .. tarball, "-C", bad .. "/src", top })
    vim.uv.fs_copyfile(dist .. "/SHA256SUMS", bad .. "/SHA256SUMS")
    setup_without_cmd({ install = { from = bad } })
    local install = require("agentd.install")
    local data = home .. "/.local/share/nvim/agentd"

    -- Nothing installed yet: the install fails, and leaves nothing.
    local said, log = install_log()
    local ok, err = pcall(install.run, { log = log })
    assert.is_false(ok)
    assert.matches("^agentd install: checksum mismatch, nothing installed: " .. vim.pesc(bad .. "/" .. tarball) .. " has SHA%-256 %x+, but " .. vim.pesc(bad .. "/SHA256SUMS") .. " says %x+%. The tarball is damaged or was tampered with", err)
    assert.same({ "bin" }, vim.fn.readdir(data))
    assert.same({}, vim.fn.readdir(data .. "/bin"))
    -- :Agentd install says the same as an error.
    local notes = H.notes()
    vim.cmd("Agentd install")
    local note = H.find_note(notes, "checksum mismatch")
    assert.is_not_nil(note)
    assert.equals(vim.log.levels.ERROR, note.level)
    table.insert(said, "error: " .. err)
    local text = checkhealth()
    assert.matches("ERROR agentd: agentd was not found: not installed %(" .. vim.pesc(data .. "/bin/agentd") .. "%) and not on %$PATH; run :Agentd install", text)
    assert.matches(":Agentd install builds agentd with Go", text)
    capture(
      "install-tampered.txt",
      ":Agentd install without Go, from a release folder whose tarball was swapped (nothing installed before)",
      said,
      text,
      { [bad] = "<tampered release folder>" }
    )

    -- Over an installed agentd: refused, and the installed one is untouched.
    install.run({ from = dist, log = function() end })
    local before = install.sha256(data .. "/bin/agentd")
    ok, err = pcall(install.run, { log = function() end })
    assert.is_false(ok)
    assert.matches("checksum mismatch, nothing installed", err)
    assert.equals(before, install.sha256(data .. "/bin/agentd"))
    assert.equals(DIST_VERSION, vim.json.decode(sh({ data .. "/bin/agentd", "version", "--json" })).version)
    assert.same({ "agentd" }, vim.fn.readdir(data .. "/bin"))
    assert.equals(dist .. "/" .. tarball, install.info().from)
  end)
end)

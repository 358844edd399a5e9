-- :Agentd install, lazy.nvim's build step: puts an agentd binary under
-- stdpath("data")/agentd/bin, which the plugin runs when cmd is not set.
--
-- With Go on $PATH and this plugin inside an agentd checkout, it builds
-- agentd from that checkout. Otherwise it takes the release tarball for
-- this platform (agentd_<ver>_<os>_<arch>.tar.gz, from `make dist`) out of
-- a release URL or a local folder, checks it against that release's
-- SHA256SUMS, and refuses it when the sum differs. Either way the binary is
-- written to a temporary file beside its final place, run once
-- (`version --json`, its protocol must be this plugin's), then renamed
-- over the old one: a failed install leaves the old binary as it was.
local M = {}

-- Where releases are published; a release's SHA256SUMS names its tarballs.
M.DEFAULT_RELEASE = "https://github.com/agentd/agentd/releases/latest/download"

local uv = vim.uv or vim.loop

---The folder installs go to: stdpath("data")/agentd.
function M.dir()
  return vim.fn.stdpath("data") .. "/agentd"
end

---The installed binary's path (it may not exist).
function M.bin()
  return M.dir() .. "/bin/agentd"
end

---What the last install recorded ({source, version, ...}), or nil.
function M.info()
  local f = io.open(M.dir() .. "/install.json", "r")
  if not f then
    return nil
  end
  local ok, info = pcall(vim.json.decode, f:read("*a"))
  f:close()
  return ok and type(info) == "table" and info or nil
end

---The agentd checkout this plugin sits in (editors/nvim of it), or nil.
function M.repo()
  local src = debug.getinfo(1, "S").source:gsub("^@", "")
  -- …/editors/nvim/lua/agentd/install.lua → …
  local root = vim.fn.fnamemodify(src, ":p:h:h:h:h:h")
  if uv.fs_stat(root .. "/go.mod") and uv.fs_stat(root .. "/cmd/agentd") then
    return root
  end
end

---The release platform of this machine: "linux", "amd64" (nil when agentd
---publishes none for it).
function M.platform()
  local u = uv.os_uname()
  local os_name = ({ Linux = "linux", Darwin = "darwin" })[u.sysname]
  local arch = ({ x86_64 = "amd64", amd64 = "amd64", aarch64 = "arm64", arm64 = "arm64" })[u.machine]
  return os_name, arch, u.sysname .. "/" .. u.machine
end

local function lines_of(text)
  return vim.split(text or "", "\n", { trimempty = true })
end

local function tail(text, n)
  local l = lines_of(text)
  return table.concat(vim.list_slice(l, math.max(1, #l - (n or 8) + 1)), "\n")
end

---Runs argv; returns the completed result (code 124: it timed out).
local function run(argv, opts)
  local ok, proc = pcall(vim.system, argv, vim.tbl_extend("force", { text = true }, opts or {}))
  if not ok then
    return { code = 127, stdout = "", stderr = tostring(proc) }
  end
  return proc:wait((opts and opts.timeout) or 600000)
end

local function fail(msg)
  error("agentd install: " .. msg, 0)
end

---The SHA-256 of a file, in hex: sha256sum, shasum or openssl (Neovim's
---sha256() takes no bytes with a NUL in them).
function M.sha256(path)
  local tries = {
    { "sha256sum", path },
    { "shasum", "-a", "256", path },
    { "openssl", "dgst", "-sha256", "-r", path },
  }
  for _, argv in ipairs(tries) do
    if vim.fn.executable(argv[1]) == 1 then
      local res = run(argv)
      local sum = res.code == 0 and (res.stdout or ""):match("^(%x+)")
      if sum and #sum == 64 then
        return sum:lower()
      end
      fail(("%s %s failed: %s"):format(argv[1], path, tail(res.stderr, 3)))
    end
  end
  fail("no sha256sum, shasum or openssl to check the tarball with")
end

---Parses SHA256SUMS (sha256sum's format: "<hex>  <name>", or "<hex> *<name>").
function M.parse_sums(text)
  local sums = {}
  for _, line in ipairs(lines_of(text)) do
    local sum, name = line:match("^(%x+)%s+%*?(%S+)%s*$")
    if sum and #sum == 64 then
      sums[name] = sum:lower()
    end
  end
  return sums
end

local function is_url(from)
  return from:match("^%a[%w+.-]*://") ~= nil
end

---Copies a release's file (a URL or a file in a folder) to dest.
local function fetch(from, name, dest)
  if is_url(from) then
    if vim.fn.executable("curl") ~= 1 then
      fail("curl is needed to download " .. from .. "/" .. name)
    end
    local url = from:gsub("/+$", "") .. "/" .. name
    local res = run({ "curl", "-fsSL", "--retry", "2", "-o", dest, url }, { timeout = 300000 })
    if res.code ~= 0 then
      fail(("could not download %s: %s"):format(url, vim.trim(tail(res.stderr, 3))))
    end
    return url
  end
  local src = vim.fs.normalize(vim.fn.fnamemodify(vim.fn.expand(from), ":p")):gsub("/+$", "") .. "/" .. name
  if not uv.fs_stat(src) then
    fail(("%s does not exist (install.from is %s)"):format(src, from))
  end
  local ok, err = uv.fs_copyfile(src, dest)
  if not ok then
    fail(("could not copy %s: %s"):format(src, err))
  end
  return src
end

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function write_file(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

---Makes a fresh staging folder beside bin/ (so the rename stays on one
---file system); removed when the install ends, whichever way.
local function staging()
  local dir = M.dir()
  vim.fn.mkdir(dir .. "/bin", "p")
  local st = ("%s/.install-%d-%d"):format(dir, vim.fn.getpid(), uv.hrtime())
  vim.fn.mkdir(st, "p")
  return st
end

---Builds agentd from the checkout with Go into tmp. Returns a description.
local function go_build(repo, tmp, log)
  local go = vim.fn.exepath("go")
  local ldflags = {}
  if vim.fn.executable("git") == 1 then
    -- As `make build` stamps it: the nearest v* tag, else
    -- 0.1.0-dev+<commit>[.dirty] (stamped here, not left to Go's VCS
    -- stamping, which GOFLAGS=-buildvcs=false turns off).
    local function git(...)
      local r = run(vim.list_extend({ "git", "-C", repo }, { ... }), { timeout = 20000 })
      return r.code == 0 and vim.trim(r.stdout or "") or nil
    end
    local rev = git("rev-parse", "HEAD")
    if rev and rev ~= "" then
      local tag = git("describe", "--tags", "--match", "v[0-9]*", "--dirty")
      local version = tag and tag ~= "" and tag:gsub("^v", "") or nil
      if not version then
        local dirty = run({ "git", "-C", repo, "diff", "--quiet", "HEAD" }, { timeout = 20000 }).code ~= 0
        version = "0.1.0-dev+" .. rev:sub(1, 12) .. (dirty and ".dirty" or "")
      end
      ldflags = { "-X main.version=" .. version, "-X main.commit=" .. rev }
    end
  end
  -- No -trimpath: the same flags as a plain `go build`, so Go's build cache
  -- of one serves the other.
  local argv = { go, "build", "-o", tmp }
  if #ldflags > 0 then
    vim.list_extend(argv, { "-ldflags", table.concat(ldflags, " ") })
  end
  table.insert(argv, "./cmd/agentd")
  log(("building agentd with %s in %s"):format(go, repo))
  local res = run(argv, { cwd = repo, timeout = 900000 })
  if res.code ~= 0 then
    fail(
      ("`go build ./cmd/agentd` in %s %s:\n%s\nTo take a release tarball instead: install = { go = false }"):format(
        repo,
        res.code == 124 and "did not finish in 15 minutes" or ("failed (exit " .. res.code .. ")"),
        tail(res.stderr, 12)
      )
    )
  end
  return { source = "go", from = repo, go = go }
end

---Takes the release tarball for this platform out of from (URL or folder),
---checks it against from's SHA256SUMS, and unpacks agentd into tmp.
local function from_release(from, st, tmp, log)
  local os_name, arch, raw = M.platform()
  if not os_name or not arch then
    fail(("agentd publishes no release for %s; build it with Go (install Go, then :Agentd install)"):format(raw))
  end
  log(("taking the %s/%s release from %s"):format(os_name, arch, from))
  local sums_where = fetch(from, "SHA256SUMS", st .. "/SHA256SUMS")
  local sums = M.parse_sums(read_file(st .. "/SHA256SUMS"))
  local name, version
  local suffix = ("_%s_%s.tar.gz"):format(os_name, arch)
  local listed = {}
  for n in pairs(sums) do
    table.insert(listed, n)
    local v = n:match("^agentd_(.+)" .. vim.pesc(suffix) .. "$")
    if v then
      name, version = n, v
    end
  end
  if not name then
    table.sort(listed)
    fail(
      ("%s lists no tarball for %s/%s (it lists: %s)"):format(
        sums_where,
        os_name,
        arch,
        #listed > 0 and table.concat(listed, ", ") or "nothing"
      )
    )
  end
  local tarball = st .. "/" .. name
  local where = fetch(from, name, tarball)
  local got, want = M.sha256(tarball), sums[name]
  if got ~= want then
    fail(
      ("checksum mismatch, nothing installed: %s has SHA-256 %s, but %s says %s. The tarball is damaged or was tampered with; download the release again"):format(
        where,
        got,
        sums_where,
        want
      )
    )
  end
  log(("%s: SHA-256 %s matches SHA256SUMS"):format(name, got))
  -- Only the one member, so nothing else in the archive is written.
  local member = name:gsub("%.tar%.gz$", "") .. "/agentd"
  local res = run({ "tar", "-xzf", tarball, "-C", st, member }, { timeout = 120000 })
  if res.code ~= 0 then
    fail(("could not unpack %s from %s: %s"):format(member, where, vim.trim(tail(res.stderr, 3))))
  end
  local ok, err = uv.fs_rename(st .. "/" .. member, tmp)
  if not ok then
    fail(("could not move %s: %s"):format(member, err))
  end
  return { source = "release", from = where, sha256 = got, release_version = version }
end

---Runs tmp's `version --json`; returns what it printed, decoded.
local function check_binary(tmp)
  uv.fs_chmod(tmp, tonumber("755", 8))
  local res = run({ tmp, "version", "--json" }, { timeout = 20000 })
  local ok, v = pcall(vim.json.decode, vim.trim(res.stdout or ""))
  if res.code ~= 0 or not ok or type(v) ~= "table" or not v.version then
    fail(("the new binary does not run: `agentd version --json` exited %d: %s"):format(res.code, vim.trim(tail(res.stderr, 3))))
  end
  local want = require("agentd.rpc").PROTOCOL_VERSION
  if v.protocol ~= want then
    fail(("the new agentd %s speaks protocol %s, this plugin %d: update the plugin and agentd together"):format(v.version, tostring(v.protocol), want))
  end
  return v
end

---Installs agentd. opts (over setup()'s install option): from (a release
---URL or folder), go (false: never build with Go), log (fun(msg)).
---Returns {path, version, protocol, source, from, ...}; raises an error
---("agentd install: …") when nothing was installed.
function M.run(opts)
  local cfg = require("agentd.config").get().install or {}
  opts = vim.tbl_extend("force", {}, cfg, opts or {})
  local log = opts.log or function(msg)
    vim.api.nvim_echo({ { "agentd: " .. msg } }, true, {})
    pcall(vim.cmd.redraw)
  end
  local st = staging()
  local tmp = ("%s/bin/.agentd.tmp-%d"):format(M.dir(), vim.fn.getpid())
  local ok, res = pcall(function()
    local repo = M.repo()
    local how
    if opts.go ~= false and repo and vim.fn.executable("go") == 1 then
      how = go_build(repo, tmp, log)
    else
      if opts.go ~= false and not repo then
        log("this plugin is not inside an agentd checkout: nothing to build with Go")
      end
      how = from_release(opts.from or M.DEFAULT_RELEASE, st, tmp, log)
    end
    local v = check_binary(tmp)
    local ok, err = uv.fs_rename(tmp, M.bin())
    if not ok then
      fail(("could not rename %s to %s: %s"):format(tmp, M.bin(), err))
    end
    how.path, how.version, how.protocol, how.commit = M.bin(), v.version, v.protocol, v.commit
    how.os, how.arch, how.installed_at = v.os, v.arch, os.date("!%Y-%m-%dT%H:%M:%SZ")
    write_file(M.dir() .. "/install.json", vim.json.encode(how))
    return how
  end)
  vim.fn.delete(st, "rf")
  vim.fn.delete(tmp)
  if not ok then
    error(res, 0)
  end
  -- :h agentd for a plugin manager that indexes only the repository's doc/.
  local doc = vim.fn.fnamemodify(debug.getinfo(1, "S").source:gsub("^@", ""), ":p:h:h:h") .. "/doc"
  pcall(vim.cmd.helptags, vim.fn.fnameescape(doc))
  log(("installed agentd %s (protocol %d) at %s, %s"):format(
    res.version,
    res.protocol,
    res.path,
    res.source == "go" and "built with Go from " .. res.from or "from " .. res.from
  ))
  return res
end

---:Agentd install: M.run, its failure said with vim.notify. Run inside a
---coroutine, as lazy.nvim runs `build = ":Agentd install"`, a failure is
---also raised, so that the build is marked failed.
function M.command()
  local ok, err = pcall(M.run)
  if not ok then
    vim.notify(tostring(err), vim.log.levels.ERROR)
    local co, main = coroutine.running()
    if co and not main then
      error(tostring(err), 0)
    end
  end
  return ok
end

---What lazy.nvim's build runs (the repository's build.lua): M.run, whose
---error fails the build.
function M.build(opts)
  return M.run(opts)
end

return M

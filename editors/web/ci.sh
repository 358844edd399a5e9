#!/usr/bin/env bash
# The web page's CI, on a fresh Debian machine of this project's kind (Go,
# Node 20 + npm, root): installs Debian's Chromium when missing and the
# pinned playwright-core (npm ci), then runs editors/web's Go tests — the
# security tests against the real handler and a real daemon, and the
# end-to-end test in Chromium with the demo agent and the real Claude Code
# offline (AGENTD_AGENTS_CACHE; AGENTD_REQUIRE_AGENTS=1 makes a missing
# agent fail), and the page of `agentd web --hosts` over two real OpenSSH
# servers on loopback (openssh-server, which .ci/run installs) — and
# cmd/agentd's tests of `agentd web` (TestWeb*, --hosts among them). Screenshots go to
# editors/web/artifacts/. The last line is always `web: N passed, N failed`.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${AGENTD_CACHE:-$HOME/.cache/agentd}/web
ARTIFACTS=$HERE/artifacts
GO=${GO:-go}
export npm_config_cache=$CACHE/npm npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

passed=0
failed=0
summary() { echo "web: $passed passed, $failed failed"; }
step() { echo; echo "== $*"; }
must() {
  if ! "$@"; then
    echo "ci.sh: FAILED: $*" >&2
    failed=$((failed + 1))
    summary
    exit 1
  fi
}

install_chromium() {
  command -v chromium >/dev/null && { echo "chromium: $(command -v chromium)"; return 0; }
  local sudo=''
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >"$CACHE/apt.log" 2>&1 \
    || { tail -20 "$CACHE/apt.log"; return 1; }
}

install_npm() {
  local want
  want=$(sha256sum "$HERE/package.json" "$HERE/package-lock.json" | sha256sum | cut -c1-16)
  if [ -f "$HERE/node_modules/.ci-stamp" ] && [ "$(cat "$HERE/node_modules/.ci-stamp")" = "$want" ]; then
    echo "node_modules: up to date"
    return 0
  fi
  (cd "$HERE" && npm ci --no-progress) || return 1
  echo "$want" >"$HERE/node_modules/.ci-stamp"
}

# Adds a go test -v log's passes and failures (tests and subtests) and
# the browser script's steps to the totals.
count() {
  local log=$1 p f
  p=$(grep -cE '^\s*(--- PASS|ok [0-9]+ - )' "$log")
  f=$(grep -cE '^\s*(--- FAIL|not ok [0-9]+ - )' "$log")
  passed=$((passed + p))
  failed=$((failed + f))
}

mkdir -p "$ARTIFACTS" "$CACHE"
rm -f "$ARTIFACTS"/*.png

step "Debian's Chromium"
must install_chromium
step "playwright-core (pinned, npm ci)"
must install_npm

step "editors/web: security tests (real handler, real daemon) and the browser end-to-end test"
(cd "$REPO" && AGENTD_WEB_BROWSER=1 CHROMIUM="$(command -v chromium)" ARTIFACTS="$ARTIFACTS" \
  timeout 1200 "$GO" test -count=1 -v ./editors/web/) 2>&1 | tee "$CACHE/web-test.log"
rc1=${PIPESTATUS[0]}
count "$CACHE/web-test.log"

step "cmd/agentd: agentd web (listen refusal, the printed link, --rotate, --qr) and the daemon's cost when web is off"
(cd "$REPO" && timeout 600 "$GO" test -count=1 -v -run 'TestWeb' ./cmd/agentd/) 2>&1 | tee "$CACHE/cmd-test.log"
rc2=${PIPESTATUS[0]}
count "$CACHE/cmd-test.log"

echo "screenshots: $(ls "$ARTIFACTS"/*.png 2>/dev/null | wc -l) in $ARTIFACTS"
if [ "$rc1" -ne 0 ] || [ "$rc2" -ne 0 ]; then
  [ $failed -ne 0 ] || failed=1
  summary
  exit 1
fi
summary

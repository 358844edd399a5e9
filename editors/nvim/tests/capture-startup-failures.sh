#!/usr/bin/env bash
# What a person sees in a real Neovim (in tmux) when agentd cannot start,
# for each case of issue 31; writes the captured screens to
#   tests/captures/startup-failures.txt
#
#   AGENTD_BIN=/path/to/agentd NVIM=/path/to/nvim bash tests/capture-startup-failures.sh
#
# Paths on the screens are under /tmp/agentd-capture, so a run on another
# machine gives the same text. Needs tmux. Starts a daemon of its own
# (socket in that folder) and stops it at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${AGENTD_BIN:?set AGENTD_BIN to an agentd binary}
nvim=${NVIM:-nvim}
out=${OUT:-$here/tests/captures/startup-failures.txt}
dir=/tmp/agentd-capture
rm -rf "$dir"
mkdir -p "$dir/state" "$(dirname "$out")"
mkdir -m 700 "$dir/run"
cp "$bin" "$dir/agentd"
printf '#!/bin/sh\necho "agentd: cannot read rules: /etc/agentd/rules/x.toml: line 3: bad key" >&2\nexit 2\n' >"$dir/agentd-exits-2"
chmod +x "$dir/agentd-exits-2"
sock=$dir/tmux.sock
export AGENTD_SOCKET=$dir/run/agentd.sock XDG_STATE_HOME=$dir/state
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null || true
  "$dir/agentd" stop --force >/dev/null 2>&1 || true
}
trap cleanup EXIT

: >"$out.tmp"
rows=12 then_enter=1
# case TITLE SETUP-OPTIONS KEYS... : a fresh Neovim with that setup(), the
# keys typed (each an Ex command), the screen after.
case_() {
  local title=$1 opts=$2
  shift 2
  cat >"$dir/init.lua" <<EOF
vim.opt.rtp:prepend("$here")
vim.cmd.runtime("plugin/agentd.lua")
require("agentd").setup($opts)
vim.o.laststatus = 2
vim.o.shortmess = vim.o.shortmess .. "I"
EOF
  tmux -S "$sock" new-session -d -s c -x 100 -y "$rows" -e "AGENTD_SOCKET=$AGENTD_SOCKET" -e "XDG_STATE_HOME=$XDG_STATE_HOME" \
    "$nvim -u $dir/init.lua -i NONE -n"
  sleep 1
  [ $# -gt 0 ] || sleep 2
  local typed=()
  for k in "$@"; do
    tmux -S "$sock" send-keys -t c "$k" Enter
    typed+=("$k")
    sleep 2
  done
  {
    echo "=== $title"
    echo "setup($opts)"
    for k in "${typed[@]}"; do echo "typed: $k"; done
    [ ${#typed[@]} -gt 0 ] || echo "typed: nothing"
    echo "--- screen (100x$rows):"
    tmux -S "$sock" capture-pane -p -t c | sed -e 's/[[:space:]]*$//'
    if [ "$then_enter" = 1 ]; then
      # Dismiss the message: what is left is every window there is.
      tmux -S "$sock" send-keys -t c Enter
      sleep 0.5
      echo "--- after Enter:"
      tmux -S "$sock" capture-pane -p -t c | sed -e 's/[[:space:]]*$//'
    fi
    echo
  } >>"$out.tmp"
  tmux -S "$sock" kill-server 2>/dev/null || true
  "$dir/agentd" stop --force >/dev/null 2>&1 || true
}

case_ "a cmd that exits 2 with a message: Neovim starts (autoconnect looks for a daemon that runs)" \
  "{ cmd = \"$dir/agentd-exits-2\" }"
case_ "a cmd that exits 2 with a message: :Agentd new demo" \
  "{ cmd = \"$dir/agentd-exits-2\", autoconnect = false }" ":Agentd new demo"
case_ "agentd given a bad argument (--stdio twice): the cause from its stderr, not its usage text" \
  "{ cmd = \"$dir/agentd\", args = { \"--stdio\" }, autoconnect = false }" ":Agentd new demo"
case_ "a cmd that does not exist" \
  "{ cmd = \"$dir/no-such-agentd\", autoconnect = false }" ":Agentd new demo"
then_enter=0
case_ "the issue's init.lua: a cmd list with --stdio; setup() says the right form as Neovim starts" \
  "{ cmd = { \"$dir/agentd\", \"--stdio\" } }"
case_ "the issue's init.lua and command: a path and its arguments, run as that argv" \
  "{ cmd = { \"$dir/agentd\", \"--stdio\" } }" ":Agentd new $dir/agentd demo-agent"
then_enter=1
case_ "a name that is neither an agent nor a program" \
  "{ cmd = \"$dir/agentd\" }" ":Agentd new no-such-agent --flag"
rows=36 then_enter=0
case_ ":checkhealth agentd with the cmd that exits 2" \
  "{ cmd = \"$dir/agentd-exits-2\", autoconnect = false }" ":checkhealth agentd" ":only"
mv "$out.tmp" "$out"
echo "wrote $out"

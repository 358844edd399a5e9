#!/usr/bin/env bash
# Installs a Neovim newer than Debian 12's 0.7 without touching the system:
# the neovim packages of another Debian suite (and that suite's libc), fetched
# with a private apt configuration, unpacked and patchelf'd into
#   ${AGENTD_CACHE:-$HOME/.cache/agentd}/nvim-<suite>/usr/bin/nvim
#
#   install-nvim.sh [suite...]      default: trixie (Neovim 0.10.x); sid gives 0.12.x
#
# Prints one line per suite: "<suite> <path to nvim>". Idempotent: a suite
# already installed (and whose nvim runs) is not fetched again.
set -euo pipefail

cache=${AGENTD_CACHE:-$HOME/.cache/agentd}
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(trixie)

# The Debian mirror the system already uses (the same host, another suite).
mirror() {
  local m
  m=$(grep -rhoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
    grep -oE 'https?://[^ ]+' | grep -v security | head -n1 || true)
  echo "${m:-http://deb.debian.org/debian}"
}

install_suite() {
  local suite=$1
  local dest="$cache/nvim-$suite"
  local nvim="$dest/usr/bin/nvim"
  if [ -x "$nvim" ] && "$nvim" --version >/dev/null 2>&1; then
    echo "$suite $nvim"
    return 0
  fi
  command -v patchelf >/dev/null || { echo "install-nvim: patchelf is needed (apt-get install patchelf)" >&2; return 1; }

  local work="$cache/apt-$suite"
  rm -rf "$work" "$dest.tmp"
  mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$dest.tmp"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $suite main" >"$work/sources.list"
  : >"$work/status"
  local apt=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o "Dir::State::status=$work/status"
    -o "APT::Architecture=amd64" -o "Debug::NoLocking=1" -o "Acquire::Languages=none" -o "APT::Sandbox::User=root")
  # (errexit does not hold inside a function called with ||: each step says.)
  apt-get "${apt[@]}" -qq update >&2 || { echo "install-nvim: apt-get update for $suite failed" >&2; return 1; }

  # neovim, its runtime, their Depends (recursively, as this suite has them),
  # and the suite's libc: the binary is built against it.
  local pkgs
  pkgs=$(apt-cache "${apt[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
      --no-breaks --no-replaces --no-enhances --no-pre-depends neovim neovim-runtime libc6 libgcc-s1 2>/dev/null |
    grep -vE '^ |^<' | sort -u)
  [ -n "$pkgs" ] || { echo "install-nvim: $suite has no neovim package" >&2; return 1; }
  # Things that a Neovim process does not load.
  pkgs=$(printf '%s\n' $pkgs | grep -vE '^(debconf|perl-base|dpkg|tar|base-files|debianutils|sensible-utils|libc-bin|libc-l10n|locales|tzdata|usrmerge|install-info|libperl.*)$' || true)
  (cd "$work/debs" && apt-get "${apt[@]}" -qq download $pkgs >&2) ||
    { echo "install-nvim: downloading $suite packages failed" >&2; return 1; }

  local deb
  for deb in "$work/debs"/*.deb; do
    dpkg-deb -x "$deb" "$dest.tmp" || return 1
  done
  local L="$dest.tmp/usr/lib/x86_64-linux-gnu"
  # Merged /usr: some libraries are still shipped under /lib.
  if [ -d "$dest.tmp/lib/x86_64-linux-gnu" ]; then
    cp -an "$dest.tmp/lib/x86_64-linux-gnu/." "$L/"
  fi
  [ -e "$L/ld-linux-x86-64.so.2" ] || { echo "install-nvim: no ld-linux-x86-64.so.2 in $suite's libc6" >&2; return 1; }
  # The interpreter and rpath are absolute: set them for the final place.
  local Lfinal="$dest/usr/lib/x86_64-linux-gnu"
  patchelf --set-interpreter "$Lfinal/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$Lfinal" "$dest.tmp/usr/bin/nvim" || return 1
  rm -rf "$dest"
  mv "$dest.tmp" "$dest"
  rm -rf "$work"
  # Neovim finds its runtime beside the binary (../share/nvim/runtime).
  if ! "$nvim" --headless -u NONE -i NONE -n +q >/dev/null 2>&1; then
    echo "install-nvim: $nvim does not run" >&2
    return 1
  fi
  echo "$suite $nvim"
}

status=0
for s in "${suites[@]}"; do
  install_suite "$s" || status=1
done
exit $status

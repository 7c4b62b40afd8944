#!/usr/bin/env bash
# Builds the real OpenHands the tests run: one virtual environment per lock
# file given (default: every *.txt lock here but uv.txt), under
#   ~/.cache/oh-bridge/openhands/<name>-<hash>/   (OH_BRIDGE_OPENHANDS_CACHE
#   moves it; the tests look there too, whatever HOME they run with)
# where <hash> is the first 16 hex digits of the lock file's SHA-256, so a
# changed lock gets a new environment and the Go helper
# (agentserver/realserver) finds the one that matches the lock it reads.
#
# Each environment is built in a temporary directory beside it and renamed
# into place after a marker file is written last: an interrupted build
# leaves no environment that looks whole, and a second run with the same
# lock does nothing. Packages come from the lock alone (--require-hashes
# --no-deps), installed by uv (itself installed from uv.txt with hashes into
# its own environment under the cache).
#
# Usage: test/openhands/install.sh [NAME ...]   e.g. agent-server-1.58
#        test/openhands/install.sh --uv          installs uv, prints its path
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache="${OH_BRIDGE_OPENHANDS_CACHE:-$HOME/.cache/oh-bridge/openhands}"
marker=.oh-bridge-complete
mkdir -p "$cache"

lock_hash() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -c1-16; else shasum -a 256 "$1" | cut -c1-16; fi
}

# python312 prints an interpreter of Python 3.12: OH_BRIDGE_PYTHON312, else
# python3.12 on PATH, else pyenv's. The CLI (openhands 1.16.0) requires
# ==3.12.*, so every environment uses 3.12.
python312() {
  local c candidates=()
  [ -n "${OH_BRIDGE_PYTHON312:-}" ] && candidates+=("$OH_BRIDGE_PYTHON312")
  command -v python3.12 >/dev/null && candidates+=("$(command -v python3.12)")
  local roots=("$HOME/.pyenv")
  command -v pyenv >/dev/null && roots=("$(pyenv root)" "${roots[@]}")
  for r in "${roots[@]}"; do
    for c in "$r"/versions/3.12*/bin/python3.12; do [ -x "$c" ] && candidates+=("$c"); done
  done
  candidates+=(/usr/bin/python3.12 /usr/local/bin/python3.12 /opt/homebrew/bin/python3.12)
  for c in "${candidates[@]}"; do
    # A pyenv shim for a version that is not selected fails here.
    if [ -x "$c" ] && "$c" -c 'import sys, venv; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then
      echo "$c"
      return
    fi
  done
  echo "install.sh: no Python 3.12 found (tried OH_BRIDGE_PYTHON312, python3.12 on PATH, pyenv's versions/3.12*, /usr/bin, /usr/local/bin, /opt/homebrew/bin)." >&2
  echo "Install one, e.g. 'pyenv install 3.12', 'apt-get install python3.12 python3.12-venv' or 'brew install python@3.12', or set OH_BRIDGE_PYTHON312 to its path." >&2
  exit 1
}

# fresh_tmp makes a build directory for name beside the environments,
# after removing those an interrupted run left more than an hour ago.
fresh_tmp() {
  find "$cache" -maxdepth 1 -name ".build-$1-*" -mmin +60 -exec rm -rf {} + 2>/dev/null || true
  mktemp -d "$cache/.build-$1-XXXXXX"
}

# settle renames a finished build to dir (os.rename: atomic, and it fails
# when dir is there and not empty); another run that finished the same
# lock first wins, and this build is dropped.
settle() {
  local tmp=$1 dir=$2
  if ! "$py" -c 'import os, sys; os.rename(sys.argv[1], sys.argv[2])' "$tmp" "$dir" 2>/dev/null; then
    [ -f "$dir/$marker" ] || { echo "install.sh: cannot rename $tmp to $dir" >&2; exit 1; }
    rm -rf "$tmp"
  fi
}

py=$(python312)

# uv, from uv.txt (hashed), in its own environment.
uv_dir="$cache/uv-$(lock_hash "$here/uv.txt")"
if [ ! -f "$uv_dir/$marker" ]; then
  rm -rf "$uv_dir"
  tmp=$(fresh_tmp uv)
  "$py" -m venv "$tmp"
  "$tmp/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r "$here/uv.txt"
  # The uv binary does not depend on its environment's path.
  echo "$here/uv.txt" > "$tmp/$marker"
  settle "$tmp" "$uv_dir"
fi
uv="$uv_dir/bin/uv"
if [ "${1:-}" = --uv ]; then
  echo "$uv"
  exit 0
fi
export UV_CACHE_DIR="$cache/uv-cache" UV_PYTHON_DOWNLOADS=never UV_NO_CONFIG=1

# (Written for bash 3.2 too, macOS's: no empty array is expanded under set -u.)
if [ $# -gt 0 ]; then
  names=("$@")
else
  names=()
  for f in "$here"/*.txt; do
    n=$(basename "$f" .txt)
    case $n in uv | constraints-*) continue ;; esac
    names+=("$n")
  done
fi

for name in "${names[@]}"; do
  lock="$here/$name.txt"
  [ -f "$lock" ] || { echo "install.sh: no lock file $lock" >&2; exit 1; }
  dir="$cache/$name-$(lock_hash "$lock")"
  if [ -f "$dir/$marker" ]; then
    echo "openhands: $name is installed in $dir"
    continue
  fi
  echo "openhands: installing $name into $dir"
  start=$(date +%s)
  rm -rf "$dir"
  tmp=$(fresh_tmp "$name")
  # --relocatable: the entry points (bin/agent-server, bin/openhands) find
  # their interpreter beside them, so the rename below does not break them.
  "$uv" venv --quiet --allow-existing --relocatable --python "$py" "$tmp"
  "$uv" pip install --quiet --compile-bytecode --python "$tmp/bin/python" --require-hashes --no-deps -r "$lock"
  printf 'lock %s\npython %s\n' "$name.txt" "$("$tmp/bin/python" -c 'import platform; print(platform.python_version())')" > "$tmp/$marker"
  settle "$tmp" "$dir"
  # Environments of this name built from older locks are of no more use.
  for old in "$cache/$name"-*; do
    [ "$old" = "$dir" ] || rm -rf "$old"
  done
  echo "openhands: $name installed in $(( $(date +%s) - start ))s"
done

# Agent Canvas, from npm at the version whose agent-server (1.49.1) the
# tests run. Only when every lock is asked for (the default), and only
# once it can be had: on 2026-11-27 npm serves @openhands/agent-canvas
# 1.20.0 but not the @openhands/extensions 0.22.1 it pins (the registry's
# newest is 0.19.0), and Canvas asks for Node >= 24. The task then says so
# and goes on: the tests start Canvas's stack as Canvas does (its key
# files, agent-server 1.49.1 through uvx), which needs none of its npm
# packages.
canvas_version=1.20.0
if [ $# -eq 0 ] && command -v npm >/dev/null; then
  canvas_dir="$cache/agent-canvas-$canvas_version"
  if [ -f "$canvas_dir/$marker" ]; then
    echo "openhands: Agent Canvas $canvas_version is installed in $canvas_dir"
  else
    tmp=$(fresh_tmp agent-canvas)
    if out=$(npm install --ignore-scripts --no-audit --no-fund --prefix "$tmp" "@openhands/agent-canvas@$canvas_version" 2>&1); then
      echo "npm @openhands/agent-canvas@$canvas_version" > "$tmp/$marker"
      settle "$tmp" "$canvas_dir"
      echo "openhands: Agent Canvas $canvas_version installed in $canvas_dir"
    else
      rm -rf "$tmp"
      why=$(printf '%s\n' "$out" | grep -E 'notarget No matching|ERESOLVE|EBADENGINE|code E' | head -2 | sed 's/^npm error //' | paste -sd ';' -)
      echo "openhands: Agent Canvas $canvas_version cannot be installed from npm (${why:-npm failed}); the tests start its stack without it, as docs/openhands-local.md says"
    fi
  fi
fi

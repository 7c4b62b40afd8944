#!/usr/bin/env bash
# Regenerates the lock files (NAME.txt) from their inputs (NAME.in), with
# every wheel's hash, for Python 3.12 on every platform (--universal), with
# constraints-NAME.txt applied when there is one. uv comes from install.sh.
#
# Usage: test/openhands/lock.sh [NAME ...]   (default: every NAME.in here)
set -euo pipefail
cd "$(dirname "$0")"
uv=$(bash install.sh --uv)
export UV_NO_CONFIG=1 UV_PYTHON_DOWNLOADS=never UV_CUSTOM_COMPILE_COMMAND=test/openhands/lock.sh
# (Written for bash 3.2 too, macOS's: no empty array is expanded under set -u.)
if [ $# -gt 0 ]; then
  names=("$@")
else
  names=()
  for f in *.in; do names+=("${f%.in}"); done
fi
for name in "${names[@]}"; do
  constraints=()
  [ -f "constraints-$name.txt" ] && constraints=(--constraint "constraints-$name.txt")
  "$uv" pip compile --quiet --universal --python-version 3.12 --generate-hashes ${constraints[@]+"${constraints[@]}"} -o "$name.txt" "$name.in"
  echo "lock.sh: $name.txt: $(grep -c '^[a-z0-9]' "$name.txt") packages"
done

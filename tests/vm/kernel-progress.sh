#!/usr/bin/env bash
# Usage: kernel-progress.sh BUILD_LOG EXPECTED_OBJECTS
# Prints "<compiled>/~<expected> objects (<percent>%)" for build-kernel.sh's progress lines.
# The compiled count is the number of "  CC" lines kbuild wrote to the log so far; the expected
# count is an estimate (a build of the committed kernel.config), so the percentage stops at 99
# until make returns.
set -euo pipefail
log=${1:?usage: kernel-progress.sh BUILD_LOG EXPECTED_OBJECTS}
expected=${2:?usage: kernel-progress.sh BUILD_LOG EXPECTED_OBJECTS}
case "$expected" in
  '' | *[!0-9]*) echo "kernel-progress: expected objects must be a positive integer, got '$expected'" >&2; exit 2 ;;
esac
if [ "$expected" -eq 0 ]; then
  echo "kernel-progress: expected objects must be a positive integer, got '$expected'" >&2
  exit 2
fi
n=$(grep -c '^  CC ' "$log" 2>/dev/null || true)
n=${n:-0}
pct=$(( n * 100 / expected ))
[ "$pct" -gt 99 ] && pct=99
echo "$n/~$expected objects ($pct%)"

#!/usr/bin/env bash
# kernel-progress.sh: the percentage build-kernel.sh prints while the kernel compiles, from the
# "  CC" lines of the build log against the expected object count.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tool=$here/kernel-progress.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

log=$tmp/build.log
: >"$log"
out=$("$tool" "$log" 922)
[ "$out" = "0/~922 objects (0%)" ] || fail "empty log: '$out'"

# 461 compiled objects among other kbuild lines (HOSTCC, LD, AR are not counted).
for i in $(seq 461); do echo "  CC      kernel/f$i.o"; echo "  HOSTCC  scripts/h$i"; done >>"$log"
echo "  LD      vmlinux.o" >>"$log"
out=$("$tool" "$log" 922)
[ "$out" = "461/~922 objects (50%)" ] || fail "half: '$out'"

# More objects than the estimate (another kernel.config): never 100% before make returns.
for i in $(seq 600); do echo "  CC      drivers/g$i.o"; done >>"$log"
out=$("$tool" "$log" 922)
[ "$out" = "1061/~922 objects (99%)" ] || fail "over the estimate: '$out'"

# A bad estimate is refused, naming the argument.
if err=$("$tool" "$log" 0 2>&1); then fail "expected 0 accepted"; fi
case "$err" in *"expected"*) ;; *) fail "error does not name the argument: '$err'" ;; esac
echo "kernel progress: ok"

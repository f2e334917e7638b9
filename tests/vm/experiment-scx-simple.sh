#!/usr/bin/env bash
# Builds (or reuses) scx_simple, the kernel tree's own minimal sched_ext scheduler, from the same
# source tree as the test-bed kernel (tools/sched_ext, with its bundled libbpf and bpftool), for
# the experiment's hackbench comparison. Output: <kernel cache dir>/scx/build/bin/scx_simple; the
# path is printed on the last stdout line. The BPF side is compiled against the guest kernel's own
# BTF (VMLINUX_BTF=<cache dir>/vmlinux), not the host's.
#
#   tests/vm/experiment-scx-simple.sh KERNEL_CACHE_DIR
set -euo pipefail
kdir=${1:?usage: experiment-scx-simple.sh KERNEL_CACHE_DIR}
src=$kdir/src/tools/sched_ext
[ -f "$src/scx_simple.c" ] || { echo "experiment-scx-simple: $src/scx_simple.c missing" >&2; exit 1; }
out=$kdir/scx
bin=$out/build/bin/scx_simple
if [ ! -x "$bin" ]; then
  mkdir -p "$out"
  exec 9>"$out/.lock"
  flock 9
  if [ ! -x "$bin" ]; then
    echo "experiment-scx-simple: building scx_simple from $src (log $out/build.log)" >&2
    nice make -C "$src" O="$out" VMLINUX_BTF="$kdir/vmlinux" -j"${C2C_SCX_JOBS:-2}" scx_simple >"$out/build.log" 2>&1 ||
      { tail -n 30 "$out/build.log" >&2; exit 1; }
  fi
fi
echo "$bin"

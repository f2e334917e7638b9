#!/usr/bin/env bash
# Builds (or reuses) a small Linux 6.12 with sched_ext for the qemu test bed.
#
# The tree comes from Debian's linux-source-6.12 and is built OUTSIDE the repository, in
#   ${C2C_KERNEL_CACHE:-/var/cache/claim2core/kernel}/<version>-<hash of kernel.config + recipe>
# so a second run finds bzImage, vmlinux and vmlinux.h there and returns in seconds.
# Prints the cache directory on its last stdout line. Exit codes: 0 ok, 1 failure,
# 77 the kernel source package is missing (callers treat it as "skip").
# --print-dir prints the cache directory without building.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src_tar=${C2C_KERNEL_SOURCE:-/usr/src/linux-source-6.12.tar.xz}
fragment=$here/kernel.config
cache_root=${C2C_KERNEL_CACHE:-/var/cache/claim2core/kernel}
jobs=${C2C_KERNEL_JOBS:-$(nproc)}

log() { echo "[build-kernel $(date -u +%H:%M:%S)] $*" >&2; }

if [ ! -r "$src_tar" ]; then
  log "kernel source $src_tar missing (apt-get install -t bookworm-backports linux-source-6.12)"
  exit 77
fi
for tool in make gcc flex bison bc pahole bpftool xz; do
  command -v "$tool" >/dev/null || { log "missing build tool: $tool (see scripts/setup)"; exit 1; }
done

version=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || stat -c %Y "$src_tar")
# Bump when the build recipe itself changes in a way that changes the artefacts.
recipe=1
key=$( (cat "$fragment"; echo "recipe=$recipe") | sha256sum | cut -c1-12)
dir=$cache_root/${version//[^A-Za-z0-9.+_-]/_}-$key
if [ "${1:-}" = "--print-dir" ]; then
  echo "$dir"
  exit 0
fi
mkdir -p "$dir"

# One builder at a time (ctest and a developer may both ask); the others wait for its result.
exec 9>"$dir/.lock"
if ! flock -n 9; then
  log "another build holds $dir/.lock; waiting"
  flock 9
fi

if [ -f "$dir/.done" ] && [ -f "$dir/bzImage" ] && [ -f "$dir/vmlinux.h" ]; then
  log "cached kernel: $dir"
  echo "$dir"
  exit 0
fi

logfile=$dir/build.log
: >"$logfile"
log "cold build into $dir (log: $logfile)"
start=$(date +%s)

if [ ! -f "$dir/src/Makefile" ]; then
  log "extracting $src_tar"
  rm -rf "$dir/src" && mkdir -p "$dir/src"
  tar -xJf "$src_tar" -C "$dir/src" --strip-components=1
fi

obj=$dir/obj
mkdir -p "$obj"
mk() { nice make -C "$dir/src" O="$obj" ARCH=x86_64 "$@" >>"$logfile" 2>&1; }

log "configuring: tinyconfig + tests/vm/kernel.config"
mk tinyconfig
"$dir/src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$fragment" >>"$logfile" 2>&1
mk olddefconfig

missing=()
for opt in SCHED_CLASS_EXT DEBUG_INFO_BTF BPF_SYSCALL BPF_JIT CPUSETS BLK_DEV_INITRD SERIAL_8250_CONSOLE 64BIT SMP; do
  grep -q "^CONFIG_${opt}=y" "$obj/.config" || missing+=("CONFIG_$opt")
done
if [ "${#missing[@]}" -ne 0 ]; then
  log "FATAL: the final .config lacks ${missing[*]} (pahole >= 1.16 present? dependency dropped?)"
  exit 1
fi

log "compiling with -j$jobs (about 1,150 s of CPU: ~10 min on 2 idle cores)"
# CPU time (user + sys) of the compile goes to build-time.txt: under a shared load the wall time
# says little, the CPU time divided by the cores gives the idle-machine estimate.
timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -v -o "$dir/build-time.txt")
${timer[@]+"${timer[@]}"} nice make -C "$dir/src" O="$obj" ARCH=x86_64 -j"$jobs" bzImage >>"$logfile" 2>&1 &
pid=$!
# The percentage is against the objects a build of the committed kernel.config compiled (922
# "  CC" lines in its build.log, 6.12.95); another config only makes it an estimate (capped at 99%).
expected_objects=${C2C_KERNEL_EXPECTED_OBJECTS:-922}
while kill -0 "$pid" 2>/dev/null; do
  sleep 20
  kill -0 "$pid" 2>/dev/null && log "... $(( $(date +%s) - start ))s, $("$here/kernel-progress.sh" "$logfile" "$expected_objects")"
done
if ! wait "$pid"; then
  log "FATAL: kernel build failed; last lines of $logfile:"
  tail -n 30 "$logfile" >&2
  exit 1
fi

cp "$obj/arch/x86/boot/bzImage" "$dir/bzImage"
cp "$obj/vmlinux" "$dir/vmlinux"
cp "$obj/.config" "$dir/config"
bpftool btf dump file "$dir/vmlinux" format c >"$dir/vmlinux.h"
grep -q "struct sched_ext_ops {" "$dir/vmlinux.h" || { log "FATAL: vmlinux.h has no sched_ext types"; exit 1; }
touch "$dir/.done"
cpu=""
if [ -f "$dir/build-time.txt" ]; then
  cpu=$(awk -F': ' '/User time/{u=$2} /System time/{s=$2} END{printf "%.0f", u+s}' "$dir/build-time.txt")
  cpu=", compile CPU ${cpu}s (user+sys; /$jobs cores = $(( cpu / jobs ))s on an idle machine)"
fi
log "done in $(( $(date +%s) - start ))s wall$cpu: $dir"
echo "$dir"

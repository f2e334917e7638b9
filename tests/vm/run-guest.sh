#!/usr/bin/env bash
# Boots the cached test-bed kernel under qemu with an initramfs and returns the guest's verdict.
#
#   run-guest.sh --kernel BZIMAGE --initrd CPIO.GZ [--timeout SECONDS] [--append "ARGS"] [--log FILE]
#                [--tsc-khz KHZ]
#
# The guest prints "C2C-VERDICT: PASS" or "C2C-VERDICT: FAIL ..." on the serial console and ends
# with `reboot -f` (qemu runs with -no-reboot, so that exits qemu). Exit codes: 0 PASS, 1 FAIL,
# 3 no verdict (timeout, panic, hang), 77 qemu missing.
#
# qemu runs under nice -n ${C2C_VM_NICE:-10}, like every long CPU job on a shared machine.
#
# C2C_VM_HOST_RT=1 (benchmarks; needs root): qemu's own threads -- the main loop that fires the
# guest's timers and delivers its interrupts -- run SCHED_FIFO 1 on the host; the vCPU threads stay
# SCHED_OTHER at nice C2C_VM_NICE. When both vCPUs spin, a guest timer otherwise waits for the
# host's fair scheduler to let the main loop in (up to a host tick); that wait is the emulator's,
# not the guest scheduler's, and it dominates the guest's wakeup-latency tail. The main loop uses
# little CPU; RT throttling (required on: sched_rt_runtime_us < period) bounds it anyway.
#
# Acceleration: TCG by default (`-accel tcg,thread=multi -cpu max`): on these hosts /dev/kvm
# opens but guests hang in the BIOS. C2C_VM_ACCEL=kvm opts in; if the kernel has printed nothing
# after C2C_VM_KVM_PROBE_S seconds (default 20), the run is retried under TCG.
#
# Guest timer under TCG: the guest cannot calibrate its TSC (no HPET or PM timer, and the PIT
# method fails on a busy host), marks it unstable and runs on the 1 ms jiffies clocksource with
# no high resolution timers. --tsc-khz passes the host's TSC rate (the guest's TSC is the host's
# under TCG; c2c-host-tsc-khz measures it) as tsc_early_khz=, with tsc=reliable (the watchdog
# has no reference clock to judge it by). The LAPIC timer (the one-shot clock event device) is
# still checked against PIT ticks at boot, which a busy host can make fail; the guest then
# reports "C2C-TIMER: coarse" and reboots, and the boot is retried up to C2C_VM_TIMER_TRIES
# (default 5) times; the last try runs regardless (c2c.timer=any) and the guest says so.
set -uo pipefail

kernel="" initrd="" timeout_s=180 append="" log="" tsc_khz=""
while [ $# -gt 0 ]; do
  case "$1" in
    --kernel) kernel=$2; shift 2 ;;
    --initrd) initrd=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --append) append=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --tsc-khz) tsc_khz=$2; shift 2 ;;
    *) echo "run-guest: unknown argument $1" >&2; exit 2 ;;
  esac
done
qemu=$(command -v qemu-system-x86_64 || true)
[ -n "$qemu" ] || { echo "run-guest: qemu-system-x86_64 missing (apt-get install qemu-system-x86)" >&2; exit 77; }
[ -r "$kernel" ] && [ -r "$initrd" ] || { echo "run-guest: --kernel and --initrd must be readable files" >&2; exit 2; }
[ -n "$log" ] || log=$(mktemp /tmp/c2c-guest.XXXXXX.log)

# isolcpus= would make sched_ext refuse to enable; panic=-1 turns a guest panic into an exit;
# reboot=t (triple fault) ends qemu (-no-reboot) on a machine without a keyboard controller.
# no_timer_check: under TCG on a busy host the early IO-APIC timer check can miss its window and
# panic ("IO-APIC + timer doesn't work"); the timer itself works.
cmdline="console=ttyS0 quiet loglevel=4 panic=-1 oops=panic reboot=t no_timer_check $append"
# The guest's topology (issue #16, tests/vm/README.md): a q35 machine (ACPI: the CPUs from the
# MADT, the NUMA nodes from the SRAT, the PCI roots' nodes from _PXM) with two NUMA nodes of one
# vCPU each and a PCI device (qemu's edu) behind a pxb-pcie root bridge on node 1: bus 0x80, its
# root port's secondary bus 0x81, so the device is 0000:81:00.0 and its root pci0000:80.
# -vga none -net none: nothing the scenarios do not use. C2C_VM_TOPOLOGY=0 boots the earlier
# machine instead: microvm with acpi=off, whose MP table lists every CPU (one node, no PCI).
if [ "${C2C_VM_TOPOLOGY:-1}" = 0 ]; then
  machine=(-M microvm,acpi=off)
  topology=(-smp 2 -m 1G)
  cmdline="$cmdline c2c.topology=0"  # the guest then skips the prefer scenario, saying so
else
  machine=(-M q35 -vga none -net none)
  topology=(-smp 2 -m 1G
    -object memory-backend-ram,id=mem0,size=512M -object memory-backend-ram,id=mem1,size=512M
    -numa node,nodeid=0,cpus=0,memdev=mem0 -numa node,nodeid=1,cpus=1,memdev=mem1
    -device pxb-pcie,id=pxb1,bus_nr=128,numa_node=1,bus=pcie.0
    -device pcie-root-port,id=rp1,bus=pxb1,chassis=1,slot=1
    -device edu,bus=rp1)
fi

prio=(nice -n "${C2C_VM_NICE:-10}")
if [ "${C2C_VM_HOST_RT:-0}" = 1 ]; then
  rt_runtime=$(cat /proc/sys/kernel/sched_rt_runtime_us 2>/dev/null || echo -1)
  rt_period=$(cat /proc/sys/kernel/sched_rt_period_us 2>/dev/null || echo 0)
  if [ "$rt_runtime" -lt 0 ] || [ "$rt_runtime" -ge "$rt_period" ]; then
    echo "run-guest: C2C_VM_HOST_RT=1 refused: RT throttling is off (sched_rt_runtime_us=$rt_runtime, period $rt_period)" >&2
    exit 2
  fi
  prio=(chrt -f 1)
  machine+=(-name c2c,debug-threads=on)
fi

vcpus_to_normal() {  # vcpus_to_normal <pid of timeout>: vCPU threads ("CPU n/TCG") back to SCHED_OTHER
  local q t n=0
  for _ in $(seq 100); do
    q=$(awk '{print $1}' "/proc/$1/task/$1/children" 2>/dev/null)
    if [ -n "$q" ]; then
      n=0
      for t in /proc/"$q"/task/*; do
        grep -q "^CPU [0-9]*/" "$t/comm" 2>/dev/null || continue
        chrt -o -p 0 "${t##*/}" >/dev/null 2>&1 && renice -n "${C2C_VM_NICE:-10}" -p "${t##*/}" >/dev/null 2>&1 &&
          n=$((n + 1))
      done
      [ "$n" -ge 2 ] && return 0
    fi
    sleep 0.1
  done
  echo "run-guest: C2C_VM_HOST_RT: only $n vCPU threads found to return to SCHED_OTHER" >&2
}

boot() {  # boot <accel args...>; output to $log
  : >"$log"
  timeout --foreground -k 5 "$timeout_s" "${prio[@]}" "$qemu" "${machine[@]}" "$@" "${topology[@]}" -nographic -no-reboot \
    -kernel "$kernel" -initrd "$initrd" -append "$cmdline" >"$log" 2>&1 </dev/null &
  qpid=$!
  [ "${C2C_VM_HOST_RT:-0}" = 1 ] && vcpus_to_normal "$qpid"
}

accel=${C2C_VM_ACCEL:-tcg}
start=$(date +%s)
if [ "$accel" = kvm ] && ! [ -r /dev/kvm ]; then
  echo "run-guest: C2C_VM_ACCEL=kvm but /dev/kvm is missing or unreadable; using TCG" >&2
  accel=tcg
fi
if [ "$accel" = kvm ]; then
  boot -accel kvm -cpu host
  probe=${C2C_VM_KVM_PROBE_S:-20}
  for _ in $(seq "$probe"); do
    sleep 1
    grep -q "Linux version\|C2C-" "$log" && break
    kill -0 "$qpid" 2>/dev/null || break
  done
  if ! grep -q "Linux version\|C2C-" "$log"; then
    echo "run-guest: KVM guest printed nothing in ${probe}s (known BIOS hang on this host); retrying under TCG" >&2
    kill "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null
    accel=tcg
  fi
fi
wait_guest() {  # streams the console until the verdict (or a timer retry request) or exit
  # One tail (inotify) and bash's own read: no process is forked per poll, because every host
  # fork preempts a vCPU thread and shows up in the guest's latency tail.
  {
    tail -n +1 -f "$log" --pid "$qpid" 2>/dev/null | while IFS= read -r line; do
      printf '%s\n' "$line"
      case "$line" in
        # The verdict is the guest's last word: do not wait for a reboot that might not come.
        *"C2C-VERDICT:"* | *"C2C-TIMER: coarse, retry"*) sleep 3; kill "$qpid" 2>/dev/null; break ;;
      esac
    done
  } &
  tpid=$!
  wait "$qpid"
  qrc=$?
  sleep 0.2; kill "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null
}
if [ "$accel" = kvm ]; then
  wait_guest
else
  base_cmdline=$cmdline
  [ -n "$tsc_khz" ] && base_cmdline="$base_cmdline tsc_early_khz=$tsc_khz tsc=reliable"
  tries=${C2C_VM_TIMER_TRIES:-5}
  for try in $(seq "$tries"); do
    cmdline=$base_cmdline
    [ "$try" -eq "$tries" ] || [ -z "$tsc_khz" ] && cmdline="$cmdline c2c.timer=any"
    boot -accel tcg,thread=multi -cpu max
    wait_guest
    grep -aq "C2C-TIMER: coarse, retry" "$log" || break
    echo "run-guest: boot $try: the guest's LAPIC timer failed its boot check (busy host); rebooting" >&2
  done
fi
echo "run-guest: qemu exited rc=$qrc after $(( $(date +%s) - start ))s (accel=$accel, log $log)" >&2

verdict=$(grep -a "C2C-VERDICT:" "$log" | tail -n 1 | tr -d '\r')
case "$verdict" in
  *"C2C-VERDICT: PASS"*) exit 0 ;;
  *"C2C-VERDICT: FAIL"*) exit 1 ;;
  *) echo "run-guest: no verdict (timeout ${timeout_s}s, panic or hang)" >&2; exit 3 ;;
esac

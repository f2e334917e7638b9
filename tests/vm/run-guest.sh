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
# The kernel has no ACPI (tinyconfig), so it finds CPUs through the MP table. The pc machine's
# SeaBIOS lists only the boot CPU there; microvm with acpi=off lists all of them (-smp 2 works).
machine=(-M microvm,acpi=off)

boot() {  # boot <accel args...>; output to $log
  : >"$log"
  timeout --foreground -k 5 "$timeout_s" nice -n "${C2C_VM_NICE:-10}" "$qemu" "${machine[@]}" "$@" -smp 2 -m 1G -nographic -no-reboot \
    -kernel "$kernel" -initrd "$initrd" -append "$cmdline" >"$log" 2>&1 </dev/null &
  qpid=$!
}

accel=${C2C_VM_ACCEL:-tcg}
start=$(date +%s)
if [ "$accel" = kvm ] && [ -r /dev/kvm ]; then
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
  tail -n +1 -f "$log" --pid "$qpid" 2>/dev/null &
  tpid=$!
  # The verdict is the guest's last word: do not wait for a reboot that might not come.
  while kill -0 "$qpid" 2>/dev/null; do
    if grep -aq "C2C-VERDICT:\|C2C-TIMER: coarse, retry" "$log"; then
      sleep 3
      kill "$qpid" 2>/dev/null
      break
    fi
    sleep 0.5
  done
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

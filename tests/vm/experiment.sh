#!/usr/bin/env bash
# The 2x2 experiment (allocation topology-aware off/on x runtime scheduling off/on) in the qemu
# guest, plus hackbench with no policies. Prints the A/B/C/D table of medians and the goals.
# Not a timed test: under TCG absolute numbers are slow; ratios within one run are what count.
#
#   tests/vm/experiment.sh --build-dir DIR [--runs N] [--ms MILLISECONDS] [--no-host-rt]
#
# Host side (run-guest.sh): qemu's vCPU threads at nice C2C_VM_NICE (default 0 here) and, unless
# --no-host-rt, qemu's main loop (guest timers, interrupts) at SCHED_FIFO, so that the host's
# scheduler does not add its own latency to the guest's (C2C_VM_HOST_RT in run-guest.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build="" runs=3 ms=3000 host_rt=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --ms) ms=$2; shift 2 ;;
    --no-host-rt) host_rt=0; shift ;;
    *) echo "experiment: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$build" ] || { echo "experiment: --build-dir required" >&2; exit 2; }
out=$(mktemp /tmp/c2c-experiment.XXXXXX.jsonl)
# A hang guard only: a guest on a loaded host runs several times slower than on an idle one.
timeout_s=$(( 300 + runs * 3 * (4 * (ms / 1000 + 6) + 60) ))
# Under TCG every guest vCPU is a host thread: the host's own load shows up in the guest's tails.
export C2C_VM_NICE=${C2C_VM_NICE:-0} C2C_VM_HOST_RT=$host_rt
echo "experiment: vCPU threads at nice $C2C_VM_NICE, qemu main loop $([ "$host_rt" = 1 ] && echo "SCHED_FIFO 1" || echo "at the same nice")"
echo "experiment: host load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
rc=0
"$here/run-scenarios.sh" --build-dir "$build" --mode experiment --timeout "$timeout_s" \
  --append "EXP_RUNS=$runs EXP_MS=$ms" --results "$out" || rc=$?
echo "experiment: host load after: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; raw runs: $out"
# The table also when the guest reported a failed run (it names it): the other runs still count.
/usr/bin/python3 "$here/experiment_table.py" "$out"
[ $rc -eq 0 ] || echo "experiment: the guest's verdict was FAIL (see the console log above)" >&2
exit $rc

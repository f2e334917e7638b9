#!/usr/bin/env bash
# The vLLM runs of issue 43 as one command: boots the guest (run-scenarios.sh --mode vllm: every
# configuration in rounds, interleaved within one boot), then judges the goals (vllm_goals.py:
# goals.json, goals.md), prints the table (vllm-table.sh: table.md) and draws the per-configuration
# CDF of step latency (vllm_picture.py: vllm-cdf.png), all into --out with the run's metadata
# (metadata.json: commit, date, host load before and after, parameters, command).
#
#   tests/vm/vllm-experiment.sh [--build-dir DIR] [--runs N] [--ms MS] [--hogs N]
#       [--period-us US] [--engine-work-us US] [--worker-work-us US] [--device-us US]
#       [--configs eevdf,claim2core,...] [--out DIR] [--timeout S] [--no-host-rt]
#   tests/vm/vllm-experiment.sh --from DIR [--out DIR]   (judge and draw a run already made: no boot)
#
# --runs: rounds of every configuration (default 6, the fewest the judge accepts); --ms: each
# window (default 20000: 400 steps per EngineCore at a 50 ms period); --hogs: stress-ng CPU hogs
# (default 4: two per vCPU). The step shape (the stand-in's loop, tests/vm/workloads/vllm_loop.cpp):
# --period-us (the tick and the deadline), --engine-work-us (the busy loop's CPU per step),
# --worker-work-us (each Worker's CPU per step), --device-us (each Worker's "GPU" wait, a sleep).
# Their defaults are vllm-guest.sh's VLLM_LOOP, read from it (one place); DP 2 x TP 2 always.
# --configs: the guest's configuration names (vllm-guest.sh; default its own list).
#
# Exit: 0 every goal judged and met; 1 a goal missed or not judged (too few rounds: a run with
# --runs below 6 always ends here, by design); 2 usage; 3 the guest gave no results, or failed (a
# configuration not measured) with no goal missed; 77 skipped (no qemu or kernel source).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
die() { echo "vllm-experiment: $*" >&2; exit 2; }
loop_default=$(sed -n 's/^VLLM_LOOP="\(.*\)"$/\1/p' "$here/vllm-guest.sh")
[ -n "$loop_default" ] || die "no VLLM_LOOP=\"...\" line in $here/vllm-guest.sh to take the step shape's defaults from"
loop_opt() { echo "$loop_default" | tr ' ' '\n' | grep -A1 -x -- "--$1" | tail -n 1; }
build=$repo/build runs=6 ms=20000 hogs=4 configs="" out="" timeout_s="" host_rt=1 from=""
period=$(loop_opt period-us) engine=$(loop_opt engine-work-us) worker=$(loop_opt worker-work-us) device=$(loop_opt device-us)
dp=$(loop_opt data-parallel-size) tp=$(loop_opt tensor-parallel-size)
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || case "$1" in --no-host-rt) ;; *) die "$1 needs a value" ;; esac
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --ms) ms=$2; shift 2 ;;
    --hogs) hogs=$2; shift 2 ;;
    --period-us) period=$2; shift 2 ;;
    --engine-work-us) engine=$2; shift 2 ;;
    --worker-work-us) worker=$2; shift 2 ;;
    --device-us) device=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    --no-host-rt) host_rt=0; shift ;;
    *) die "unknown argument $1" ;;
  esac
done
whole() { case "$2" in ''|*[!0-9]*) die "$1 must be a whole number, not '$2'" ;; esac; }
whole --runs "$runs"; whole --ms "$ms"; whole --hogs "$hogs"; whole --period-us "$period"
whole --engine-work-us "$engine"; whole --worker-work-us "$worker"; whole --device-us "$device"
[ "$runs" -ge 1 ] || die "--runs must be at least 1"
[ "$period" -ge 1000 ] || die "--period-us must be at least 1000 (the guest's clock under TCG), not $period"
[ "$ms" -ge "$((period / 1000))" ] || die "--ms $ms is shorter than one period ($period us)"
case "$configs" in *[!a-z0-9,-]*) die "--configs takes names separated by commas (a-z, 0-9, -), not '$configs'" ;; esac
[ -z "$timeout_s" ] || whole --timeout "$timeout_s"

if [ -n "$from" ]; then
  [ -f "$from/results.jsonl" ] || die "--from $from: no results.jsonl there"
  [ -n "$out" ] || out=$from
  mkdir -p "$out"
  [ "$out" = "$from" ] || cp "$from"/results.jsonl "$from"/vllm-*.csv "$out"/ 2>/dev/null || true
  [ -f "$from/metadata.json" ] && [ "$out" != "$from" ] && cp "$from/metadata.json" "$out/"
  rc=0
else
  [ -n "$out" ] || out=$(mktemp -d /tmp/c2c-vllm-experiment.XXXXXX)
  mkdir -p "$out"
  loop="--data-parallel-size $dp --tensor-parallel-size $tp --period-us $period --engine-work-us $engine --worker-work-us $worker --device-us $device"
  nc=$(echo "${configs:-eevdf-idle,eevdf,claim2core,adapter,adapter-workers-lc}" | tr , '\n' | grep -c .)
  # A hang guard only: a window costs its length plus a daemon's start, the selection check and
  # stress-ng's start: 30-60 s more under TCG, ~125 s at host load 16 (2026-12-07: six 5 s
  # windows in 775 s).
  [ -n "$timeout_s" ] || timeout_s=$(( 300 + runs * nc * (ms / 1000 + 180) ))
  append="c2c.vllm_ms=$ms c2c.vllm_rounds=$runs c2c.vllm_hogs=$hogs c2c.vllm_loop=${loop// /,}"
  [ -z "$configs" ] || append="$append c2c.vllm_configs=$configs"
  export C2C_VM_NICE=${C2C_VM_NICE:-0} C2C_VM_HOST_RT=$host_rt
  # The tree the guest's binaries are built from: taken before the boot, not after it.
  commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
  git -C "$repo" diff --quiet HEAD 2>/dev/null || commit="$commit+changes"
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  date_start=$(date -u +%FT%TZ)
  start=$(date +%s)
  echo "vllm-experiment: host load before: $load_before on $(nproc) CPUs; $runs rounds of ${configs:-the default configurations}, $ms ms each, $hogs hogs, stand-in $loop; out $out"
  set +e
  "$here/run-scenarios.sh" --build-dir "$build" --mode vllm --timeout "$timeout_s" --append "$append" \
    --results "$out/results.jsonl" --samples-dir "$out" 2>&1 | tee "$out/console.txt" | grep --line-buffered -av "^C2C-VLLM-CSV\|^C2C-VLLM-TRACE"
  rc=${PIPESTATUS[0]}
  set -e
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
  ran=$(jq -rs '[.[] | select(.scenario == "vllm" and .config != null) | .config] | unique | join(",")' "$out/results.jsonl" 2>/dev/null || echo "")
  jq -n --arg date "$date_start" --arg commit "$commit" --arg lb "$load_before" --arg la "$load_after" \
    --arg cpus "$(nproc)" --arg host "$(uname -r)" --argjson secs $(( $(date +%s) - start )) --argjson rc "$rc" \
    --arg cmd "tests/vm/vllm-experiment.sh --runs $runs --ms $ms --hogs $hogs --period-us $period --engine-work-us $engine --worker-work-us $worker --device-us $device${configs:+ --configs $configs}" \
    --argjson runs "$runs" --argjson ms "$ms" --argjson hogs "$hogs" --argjson period "$period" --argjson engine "$engine" \
    --argjson worker "$worker" --argjson device "$device" --argjson dp "$dp" --argjson tp "$tp" --arg configs "$ran" --argjson host_rt "$host_rt" \
    '{date: $date, commit: $commit, command: $cmd, host_kernel: $host, host_cpus: $cpus, host_load_before: $lb,
      host_load_after: $la, wall_seconds: $secs, guest_rc: $rc, qemu_main_loop_fifo: ($host_rt == 1),
      parameters: {rounds: $runs, window_ms: $ms, hogs: $hogs, period_us: $period, engine_work_us: $engine,
                   worker_work_us: $worker, device_us: $device, data_parallel: $dp, tensor_parallel: $tp, configurations: $configs}}' \
    >"$out/metadata.json"
  echo "vllm-experiment: host load after: $load_after; guest rc $rc"
fi
[ "$rc" -eq 77 ] && { echo "vllm-experiment: skipped (run-scenarios.sh: qemu, the kernel source or a part is missing)"; exit 77; }
if [ ! -s "$out/results.jsonl" ]; then
  echo "vllm-experiment: the guest gave no results (rc $rc; see $out/console.txt): nothing to judge" >&2
  exit 3
fi
meta=()
[ -f "$out/metadata.json" ] && meta=(--metadata "$out/metadata.json")
"$here/vllm-table.sh" "$out/results.jsonl" >"$out/table.md" 2>/dev/null || echo "vllm-experiment: vllm-table.sh found no figures" >&2
cat "$out/table.md"
trc=0
/usr/bin/python3 "$here/vllm_goals.py" --results "$out/results.jsonl" --out "$out" ${meta[@]+"${meta[@]}"} || trc=$?
goals=()
[ -f "$out/goals.json" ] && goals=(--goals "$out/goals.json")
MPLBACKEND=Agg /usr/bin/python3 "$here/vllm_picture.py" --samples-dir "$out" --out "$out/vllm-cdf.png" \
  ${goals[@]+"${goals[@]}"} ${meta[@]+"${meta[@]}"} || echo "vllm-experiment: no picture (no per-step CSV)" >&2
echo "vllm-experiment: goals.json, goals.md, table.md, vllm-cdf.png and metadata.json in $out"
[ "$trc" -eq 0 ] || exit 1
if [ "$rc" -ne 0 ]; then
  echo "vllm-experiment: the guest's verdict was FAIL (rc $rc; see $out/console.txt)" >&2
  exit 3
fi
exit 0

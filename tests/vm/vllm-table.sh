#!/usr/bin/env bash
# The vLLM adapter's guest figures as a Markdown table (tests/vm/README.md): one row per
# configuration of a `run-scenarios.sh --mode vllm --results FILE` run; p50/p99 per EngineCore
# (DP0 / DP1), misses of both pooled; the per-step breakdown comes from the CSVs (--samples-dir).
#
#   tests/vm/vllm-table.sh results.jsonl
set -euo pipefail
echo "| configuration | latency p50 ms (DP0 / DP1) | p99 ms | missed (of ticks) | of them skipped | step p50 ms | busy loop run delay p50 ms | workers' run delay per step, mean ms | stress-ng bogo ops/s | CPU idle % | kernel CPU % |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
jq -rs 'map(select(.scenario == "vllm" and .latency != null)) | group_by(.config)
  | sort_by(.[0].config as $c | ["eevdf-idle", "eevdf", "claim2core", "adapter", "adapter-workers-lc", "scx-lavd", "scx-bpfland"] | index($c))
  | .[] | (map(.missed) | add) as $m | (map(.ticks) | add) as $t |
  "| \(.[0].config) | \(map(.latency.p50_us / 100 | round / 10 | tostring) | join(" / ")) | \(map(.latency.p99_us / 1000 | round | tostring) | join(" / ")) | \($m) of \($t) (\($m * 1000 / $t | round / 10) %) | \(map(.skipped) | add) | \(map(.step.p50_us / 100 | round / 10 | tostring) | join(" / ")) | \(map(.busy_loop_run_delay.p50_us / 10 | round / 100 | tostring) | join(" / ")) | \([.[].workers_run_delay[].run_delay_mean_us] | add / length / 10 | round / 100) | \(.[0].stress_bogo_ops_per_s) | \(.[0].cpu_idle_pct) | \(.[0].cpu_system_pct // "-") |"' "$1"

#!/usr/bin/env bash
# promtool check metrics (Debian's prometheus) on a live scrape of claim2cored passes (issue 17,
# item 4, first part), and it holds build_info and the process_* metrics. The checker is first shown to catch a seeded bug: a gauge named like a
# counter (`_total`), the slip the issue names. On a kernel without sched_ext the stats map is
# still pinned (all zeros), so the scheduler's counters and latency histogram are in the scrape
# and checked too, and claim2core_scheduler_enforcing must be 0.
#   metrics_promtool.sh <claim2cored>
set -euo pipefail
DAEMON=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v promtool >/dev/null || { echo "SKIP: promtool missing (scripts/setup installs prometheus)"; exit 0; }
if [ "$(id -u)" -ne 0 ] || ! mountpoint -q /sys/fs/bpf; then echo "SKIP: needs root and bpffs"; exit 0; fi
WORK=$(mktemp -d /tmp/c2c-promtool.XXXXXX)
PIN_ROOT=/sys/fs/bpf/c2c-promtool-$$
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; rm -rf "$WORK" "$PIN_ROOT"; }
trap cleanup EXIT

printf '# HELP c2c_seeded_total a monotonic sum exported as a gauge\n# TYPE c2c_seeded_total gauge\nc2c_seeded_total 3\n' |
  promtool check metrics >"$WORK/seeded.out" 2>&1 && fail "promtool accepted a gauge named c2c_seeded_total"
grep -q "c2c_seeded_total" "$WORK/seeded.out" || { cat "$WORK/seeded.out"; fail "promtool's complaint does not name the seeded metric"; }

# A free loopback port: bind 0 and read it back.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# A short read-back interval: the stats map (pinned even without sched_ext, all zeros) is read
# at each read-back, which brings the scheduler's latency histogram and enforcing gauge.
printf 'readback_interval: 200ms\n' >"$WORK/config.yaml"
"$DAEMON" --config "$WORK/config.yaml" --socket "$WORK/sock" --state-dir "$WORK/state" --pin-root "$PIN_ROOT" \
  --task-discovery scan --metrics-address "127.0.0.1:$PORT" >"$WORK/daemon.log" 2>&1 &
PID=$!
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$PORT/metrics" >"$WORK/scrape" 2>/dev/null && grep -q '^claim2core_scheduler_latency_seconds_count' "$WORK/scrape" && break
  sleep 0.2
done
[ -s "$WORK/scrape" ] || { cat "$WORK/daemon.log"; fail "no scrape from http://127.0.0.1:$PORT/metrics"; }
grep -qx 'claim2core_scheduler_enforcing 0' "$WORK/scrape" || fail "the scrape does not say claim2core_scheduler_enforcing 0 (no sched_ext here)"
for m in claim2core_apply_seconds_bucket claim2core_scheduler_latency_seconds_bucket claim2core_build_info process_cpu_seconds_total process_resident_memory_bytes process_open_fds process_start_time_seconds; do
  grep -q "^$m" "$WORK/scrape" || fail "the scrape has no $m"
done
promtool check metrics <"$WORK/scrape" || fail "promtool check metrics rejects the live scrape"
echo "ok: promtool accepts the live scrape ($(grep -c '^# TYPE' "$WORK/scrape") metric families)"

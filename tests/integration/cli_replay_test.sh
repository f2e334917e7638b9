#!/usr/bin/env bash
# claim2core replay: exit 0 on the examples, 1 on a violating trace (naming invariant and step),
# 2 on malformed traces (naming line and field), and never a crash.
set -u
BIN=$1
SRC=$2
fail=0
expect() {  # expect <code> <stderr-substring> <file>
  local want=$1 needle=$2 file=$3 out err code
  err=$("$BIN" replay "$file" 2>&1 >/dev/null)
  code=$?
  if [ "$code" -ne "$want" ] || ! grep -qF -- "$needle" <<<"$err"; then
    echo "FAIL $file: exit $code (want $want), stderr: $err (want '$needle')"
    fail=1
  else
    echo "ok   $file -> $code ${err:+($err)}"
  fi
}
for f in "$SRC"/examples/*.jsonl; do expect 0 "" "$f"; done
expect 1 "INV-4 violated at step 2 (line 2, bpf_observed)" "$SRC/examples/violating/lagging-generation-file.jsonl"
expect 1 "INV-4 violated at step 3 (line 3, daemon_restart): the restart did not move the generation past 2" \
  "$SRC/examples/violating/restart-with-lagging-generation-file.jsonl"
expect 2 "line 2: kind: unknown event kind 'task_teleported'" "$SRC/examples/invalid/unknown-kind.jsonl"
expect 2 "line 1: task.cpuset: invalid CPU list" "$SRC/examples/invalid/cpu-out-of-range.jsonl"
expect 2 "line 1: policy.spec.commandRegex: invalid RE2 regex" "$SRC/examples/invalid/bad-regex.jsonl"
expect 2 "line 1: policy.spec.executionTime" "$SRC/examples/invalid/absurd-slice.jsonl"
expect 2 "line 2: now: time went backwards" "$SRC/examples/invalid/time-goes-back.jsonl"
expect 2 "line 1: task.tid: must be a non-negative integer" "$SRC/examples/invalid/bad-type.jsonl"
expect 2 "cannot open" "$SRC/examples/does-not-exist.jsonl"
# The table format renders the lineage of every entry.
"$BIN" replay "$SRC/examples/llm-node.jsonl" --format table | grep -q "lineage: cgroup /system.slice/vllm.service -> task 3786004" \
  || { echo "FAIL table output lacks the lineage"; fail=1; }
exit $fail

#!/usr/bin/env bash
# c2c-host-tool events: a process renaming itself to EngineCore_DP9 (a write to /proc/<pid>/comm)
# shows up as one "rename" JSON line with that name and the writer's tid. Needs root.
set -euo pipefail
tool="$1"
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: needs root to load BPF programs"; exit 77; fi
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$tool" events --comm '^EngineCore_DP9$' --count 1 --timeout-ms 10000 >"$out" &
tool_pid=$!
# Rename until the tool has seen it (it may still be attaching when the first rename happens).
renamer() {
  for _ in $(seq 1 80); do
    bash -c 'printf EngineCore_DP9 > /proc/$BASHPID/comm; echo $BASHPID >> '"$out.pids"
    kill -0 "$tool_pid" 2>/dev/null || return 0
    sleep 0.1
  done
}
renamer
wait "$tool_pid"
cat "$out"
line="$(head -n1 "$out")"
echo "$line" | grep -q '"event":"rename"' || { echo "FAIL: no rename event"; exit 1; }
echo "$line" | grep -q '"comm":"EngineCore_DP9"' || { echo "FAIL: wrong comm"; exit 1; }
tid="$(echo "$line" | sed -n 's/.*"tid":\([0-9]*\).*/\1/p')"
grep -qx "$tid" "$out.pids" || { echo "FAIL: tid $tid is none of the renaming shells"; rm -f "$out.pids"; exit 1; }
rm -f "$out.pids"
echo "PASS: rename of tid $tid seen"

# The vLLM adapter's guest figure (issue #15 item 5), sourced by guest-init.sh (c2c.mode=vllm).
# One boot, one configuration after the other, each with its own claim2cored (private socket,
# state dir and pin root, task_discovery: scan: a process title changes without a tracepoint), the C++ vLLM stand-in
# (c2c-vllm-standin: DP 2 x TP 2, stock vLLM's names) and `stress-ng --cpu $VLLM_HOGS` on both vCPUs:
#   eevdf-idle  scheduler: off, no policies, no stress-ng (the floor under TCG)
#   eevdf       scheduler: off, no policies (the kernel's EEVDF)
#   claim2core  scheduler: auto (the daemon loads claim2core), no policies
#   adapter     the same + `claim2core apply -f vllm.yaml -f workers-throughput.yaml`
#   adapter-workers-lc  the same with workers-latency.yaml (the Worker variant)
#   adapter-inherit     adapter + engine-core-inherit.yaml: the busy loop's Workers inherit its boost
#                       (issue 43 item 3; not in the default list: c2c.vllm_configs=...,adapter-inherit)
#   scx-lavd, scx-bpfland  scheduler: off, the sched_ext peer loaded by its own binary for the
#                       window (peers-guest.sh; the run fails unless it is the loaded scheduler)
#   <config>-base       claim2core, adapter, adapter-workers-lc with /c2c/base.bpf.o, another build
#                       of the scheduler (run-scenarios.sh puts $C2C_VM_BASE_OBJECT there): two
#                       builds side by side in one boot
# c2c.vllm_rounds=N runs the list N times, interleaved (round 1 of every configuration, then round
# 2, ...), so that the emulated machine's drift within the boot hits every configuration alike;
# each round has its own daemon, state dir and pin root. c2c.vllm_trace_ms=N records the kernel's
# sched_wakeup and sched_switch events for N ms from 2 s into each window of round 1 and prints them as
# C2C-VLLM-TRACE lines (tests/vm/vllm_trace.py: where a woken Worker waited, behind which tasks).
# Before measuring, the pinned map (c2c-mirror-tool dump) and `claim2core get tasks` must show
# exactly the intended threads (examples/vllm-standin/intended.json) with their class, policy and
# strategy, and no entries where no policy is applied; a configuration that fails this is not
# measured and the run fails. Per configuration and EngineCore: one C2C-RESULT (latency p50/p99,
# missed deadlines, the wait for the busy loop, stress-ng's bogo ops) and every step as
# "C2C-VLLM-CSV <config> <rank> <csv line>". Nothing here writes a map: the daemon does.
#
# Needs /c2c/{claim2cored,claim2core,c2c-vllm-standin,c2c-mirror-tool,c2c-vm-tool,stress-ng,jq},
# $VLLM_FILES/{vllm.yaml,workers-throughput.yaml,workers-latency.yaml,intended.json} and the helpers
# of guest-init.sh (result, wait_state, jget).
VLLM_DIR=${VLLM_DIR:-/tmp/c2c-vllm}
[ -f /c2c/peers-guest.sh ] && . /c2c/peers-guest.sh  # peer_start, peer_loaded, peer_stop
VLLM_PEER=""
VLLM_FILES=${VLLM_FILES:-/c2c/vllm}  # the policies and intended.json (run-scenarios.sh puts them there)
VLLM_MS=${VLLM_MS:-20000}
VLLM_HOGS=${VLLM_HOGS:-4}
VLLM_CONFIGS=$(echo "${VLLM_CONFIGS:-eevdf-idle,eevdf,claim2core,adapter,adapter-workers-lc}" | tr , ' ')
VLLM_ROUNDS=${VLLM_ROUNDS:-1}
VLLM_TRACE_MS=${VLLM_TRACE_MS:-0}
# The stand-in's loop: a 50 ms inter-token interval (the deadline; 20 tokens/s); per step 1 ms of
# the busy loop's CPU, then per worker 0.5 ms of CPU and 3 ms on the "GPU" (a sleep): 4.5 ms of
# work, 2 ms of CPU per engine. The kernel argument c2c.vllm_loop=<options, commas for spaces>
# replaces it. With a 20 ms deadline the uncontended guest already missed 57-68 % of its ticks
# under TCG on the shared host (a step's p50 was 14-19 ms, the vCPUs' wakeups): see
# tests/vm/README.md.
VLLM_LOOP="--data-parallel-size 2 --tensor-parallel-size 2 --period-us 50000 --engine-work-us 1000 --worker-work-us 500 --device-us 3000"
export CLAIM2CORE_SOCKET=$VLLM_DIR/claim2cored.sock

vllm_retry() {  # vllm_retry <tenths of seconds> <command...>
  v_n=$1; shift; v_i=0
  while [ $v_i -lt "$v_n" ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; v_i=$((v_i + 1)); done
  return 1
}

cpu_jiffies() { awk '$1 == "cpu" {print $2 + $3 + $4 + $5 + $6 + $7 + $8, $5, $4 + $7 + $8}' /proc/stat; }  # total idle system

vllm_daemon_start() {  # vllm_daemon_start <auto|off> <dir> [scheduler object]: DPID
  cat >$2/claim2cored.yaml <<EOF2
node_name: dgx-spark-gb10
socket: $CLAIM2CORE_SOCKET
state_dir: $2/state
pin_root: $VLLM_PIN
scheduler: $1
scheduler_object: ${3:-/c2c/claim2core.bpf.o}
task_discovery: scan
rescan_interval: 250ms
readback_interval: 1s
EOF2
  claim2cored --config $2/claim2cored.yaml >$2/daemon.log 2>&1 &
  DPID=$!
  vllm_retry 300 claim2core status
}

# What the map and get tasks must say for the stand-in's threads ("tid class" and
# "tid policy strategy" lines, sorted), from its rows and intended.json; $1: workers-lc or "".
vllm_expected() {
  jq -s -r --slurpfile i $VLLM_FILES/intended.json --arg w "$1" '
    .[] | . as $r | $i[0].standin[$r.part] as $p
    | (if $w == "workers-lc" and ($r.part == "worker-busy-loop" or $r.part == "worker-zmq-reaper")
       then ["vllm-workers", "exact-tid", 1, 2000000] else $p end) as $q
    | select($q != null) | "\($r.tid) \($q[2]) NodeSchedulingPolicy/\($q[0]) \($q[1])"' $VLLM_D/rows.jsonl | sort
}
vllm_actual() {
  c2c-mirror-tool --pin-root $VLLM_PIN dump 2>/dev/null | awk '/class=/ {c=$0; sub(/.*class=/, "", c); sub(/ .*/, "", c); print $1, c}' | sort >$VLLM_D/map.now
  claim2core get tasks -o json 2>/dev/null | jq -r '.items[]? | select(.policy != null and .policy != "") | "\(.tid) \(.policy) \(.strategy)"' | sort >$VLLM_D/tasks.now
}
vllm_selection_ok() {  # vllm_selection_ok <workers-lc|""|none>
  vllm_actual
  if [ "$1" = none ]; then
    [ ! -s $VLLM_D/map.now ]
  else
    vllm_expected "$1" >$VLLM_D/want
    awk '{print $1, $2}' $VLLM_D/want | cmp -s - $VLLM_D/map.now &&
      awk '{print $1, $3, $4}' $VLLM_D/want | cmp -s - $VLLM_D/tasks.now
  fi
}

# The scheduler's diagnostic counters (its .bss, not ABI): diag_wakeup_preempts, or null when the
# loaded object has none (a base build) or bpftool is missing.
vllm_diag() {
  command -v bpftool >/dev/null || { echo null; return; }
  v_d=$(bpftool -j map dump name claim2co.bss 2>/dev/null |
    jq -c '[.. | objects | .diag_wakeup_preempts? // empty] | first // null' 2>/dev/null)
  case $v_d in ''|*[!0-9]*) echo null ;; *) echo $v_d ;; esac
}

# Records sched_wakeup / sched_switch for $VLLM_TRACE_MS ms from 2 s into the window and prints
# them compactly: "C2C-VLLM-TRACE <cfg> <round> <s.us> <cpu> W <comm> <pid>" and
# "... S <prev comm> <prev pid> <prev state> <next comm> <next pid>".
vllm_trace() {
  t=/sys/kernel/tracing
  [ -d $t/events ] || mount -t tracefs nodev $t 2>/dev/null
  [ -w $t/events/sched/sched_switch/enable ] || { echo "C2C-NOTE vllm $cfg: no tracefs"; return; }
  echo 0 >$t/tracing_on; echo >$t/trace; echo 4096 >$t/buffer_size_kb
  echo 1 >$t/events/sched/sched_switch/enable; echo 1 >$t/events/sched/sched_wakeup/enable
  sleep 2
  echo 1 >$t/tracing_on
  sleep $(awk -v m=$VLLM_TRACE_MS 'BEGIN {printf "%.3f", m / 1000}')
  echo 0 >$t/tracing_on
  echo 0 >$t/events/sched/sched_switch/enable; echo 0 >$t/events/sched/sched_wakeup/enable
  awk -v c="$cfg" -v r="$round" '
    function f(k,   i) { for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "?" }
    / sched_wakeup: / { ts = $0; sub(/: sched_wakeup:.*/, "", ts); n = split(ts, a, " "); ts = a[n]
      print "C2C-VLLM-TRACE", c, r, ts, f("target_cpu") + 0, "W", f("comm"), f("pid") }
    / sched_switch: / { ts = $0; sub(/: sched_switch:.*/, "", ts); n = split(ts, a, " "); ts = a[n]
      cpu = "?"; if (match($0, /\[[0-9]+\]/)) cpu = substr($0, RSTART + 1, RLENGTH - 2)
      print "C2C-VLLM-TRACE", c, r, ts, cpu + 0, "S", f("prev_comm"), f("prev_pid"), f("prev_state"), f("next_comm"), f("next_pid") }' $t/trace
  echo >$t/trace
}

vllm_run() {  # vllm_run <config> <auto|off> <selection: none|""|workers-lc> <scheduler object> [policy files...]
  cfg=$1 sched=$2 sel=$3 object=$4; shift 4
  VLLM_D=$VLLM_DIR/$cfg-r$round
  # A pin root per configuration and round: a stopped daemon leaves its pins and entries (spec/daemon.md).
  VLLM_PIN=/sys/fs/bpf/c2c-vllm-$cfg-r$round
  mkdir -p $VLLM_D/out
  if ! vllm_daemon_start $sched $VLLM_D $object; then
    sed 's/^/C2C-DAEMON-LOG /' $VLLM_D/daemon.log
    result vllm-$cfg "{\"scenario\":\"vllm\",\"config\":\"$cfg\",\"error\":\"claim2cored did not start\",\"pass\":false}"
    return
  fi
  if [ -n "$VLLM_PEER" ] && ! peer_start $VLLM_PEER $VLLM_D/peer.log; then
    result vllm-$cfg "{\"scenario\":\"vllm\",\"config\":\"$cfg\",\"error\":\"$VLLM_PEER is not the loaded sched_ext scheduler\",\"pass\":false}"
    kill -TERM $DPID; wait $DPID 2>/dev/null
    return
  fi
  state=$(cat /sys/kernel/sched_ext/state); ops=$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)
  c2c-vllm-standin serve $VLLM_LOOP --measure-ms $VLLM_MS --start-file $VLLM_D/go --out $VLLM_D/out \
    >$VLLM_D/rows 2>$VLLM_D/standin.err &
  SPID=$!
  vllm_retry 600 grep -qx ready $VLLM_D/rows
  grep -v '^ready$' $VLLM_D/rows >$VLLM_D/rows.jsonl
  arc=0
  if [ $# -gt 0 ]; then
    fargs=""; for f in "$@"; do fargs="$fargs -f $VLLM_FILES/$f"; done
    claim2core apply $fargs >$VLLM_D/apply.out 2>&1; arc=$?
  fi
  # The daemon finds the stand-in's threads at its next rescans and writes their entries.
  selected=false; vllm_retry 300 vllm_selection_ok "$sel" && selected=true
  [ "$sel" = none ] && n_want=0 || n_want=$(wc -l <$VLLM_D/want)
  echo "C2C-NOTE vllm $cfg: scheduler $state ($ops), apply rc $arc, $(wc -l <$VLLM_D/map.now) map entries, $n_want intended, selection $selected"
  claim2core get tasks 2>/dev/null | sed "s/^/C2C-VLLM-TASKS $cfg /"
  if [ $selected != true ] || [ $arc -ne 0 ]; then
    cat $VLLM_D/apply.out 2>/dev/null
    echo "C2C-NOTE vllm $cfg: wanted"; cat $VLLM_D/want 2>/dev/null
    echo "C2C-NOTE vllm $cfg: map"; cat $VLLM_D/map.now
    echo "C2C-NOTE vllm $cfg: get tasks"; cat $VLLM_D/tasks.now
    kill $SPID; wait $SPID 2>/dev/null
    result vllm-$cfg "{\"scenario\":\"vllm\",\"config\":\"$cfg\",\"error\":\"the adapter did not select exactly the intended threads\",\"apply_rc\":$arc,\"pass\":false}"
    [ -z "$VLLM_PEER" ] || peer_stop
    kill -TERM $DPID; wait $DPID 2>/dev/null; wait_state disabled 100
    return
  fi
  s0=$(c2c-vm-tool stats --pin-root $VLLM_PIN 2>/dev/null || echo '{}')
  STRESS=""
  if [ "$RUN_HOGS" -gt 0 ]; then
    # The margin covers stress-ng's own start (seconds under TCG on a loaded host: windows that
    # began before the hogs ran showed idle CPUs) and the window's end.
    stress-ng --cpu $RUN_HOGS --timeout $((VLLM_MS / 1000 + 8))s --metrics-brief >$VLLM_D/stress.out 2>&1 &
    STRESS=$!
    # The window starts once every hog runs.
    v_i=0
    while [ "$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c '^stress-ng-cpu')" -lt "$RUN_HOGS" ] && [ $v_i -lt 100 ]; do
      sleep 0.1; v_i=$((v_i + 1))
    done
  fi
  sleep 1
  TPID=""
  if [ "$VLLM_TRACE_MS" -gt 0 ] && [ $round -eq 1 ]; then vllm_trace & TPID=$!; fi  # round 1 only: the console is slow
  d0=$(vllm_diag)
  j0=$(cpu_jiffies)
  # A peer that died or was kicked out since its start would measure EEVDF under its name.
  peer_ok=true; [ -z "$VLLM_PEER" ] || peer_loaded $VLLM_PEER || peer_ok=false
  touch $VLLM_D/go
  wait $SPID; src=$?
  [ -z "$VLLM_PEER" ] || peer_loaded $VLLM_PEER || peer_ok=false
  j1=$(cpu_jiffies)
  d1=$(vllm_diag)
  [ -z "$TPID" ] || wait $TPID
  preempts=null
  [ "$d0" = null ] || [ "$d1" = null ] || preempts=$((d1 - d0))
  # Idle CPU time in the window: the hogs leave none unless the scheduler lets a CPU idle.
  idle_pct=$(echo "$j0 $j1" | awk '{ t = $4 - $1; printf "%.1f", (t > 0 ? 100 * ($5 - $2) / t : 0) }')
  # Kernel time (system + irq + softirq): where the CPU goes that neither the hogs nor the stand-in get.
  sys_pct=$(echo "$j0 $j1" | awk '{ t = $4 - $1; printf "%.1f", (t > 0 ? 100 * ($6 - $3) / t : 0) }')
  s1=$(c2c-vm-tool stats --pin-root $VLLM_PIN 2>/dev/null || echo '{}')
  [ -z "$STRESS" ] || wait $STRESS
  bogo=$(awk '$4 == "cpu" {print $5}' $VLLM_D/stress.out 2>/dev/null); bogo_s=$(awk '$4 == "cpu" {print $9}' $VLLM_D/stress.out 2>/dev/null)
  # The scheduler's counters over the window (c2c_stats: dispatches per class, boost budget
  # exhaustions, starvation rescues, ...), for telling why a configuration did what it did.
  disp=$(jq -nc --argjson a "$s0" --argjson b "$s1" '($b | with_entries(select(.value | type == "number") | .value -= ($a[.key] // 0)))
    + {dispatched: (($b.dispatched // {}) | with_entries(.value -= ($a.dispatched[.key] // 0)))}' 2>/dev/null || echo null)
  for f in $VLLM_D/out/engine-*.json; do
    [ -f "$f" ] || continue
    r=$(basename "$f" .json); r=${r#engine-}
    # What the engine's workers waited for a CPU per step (run delay), one object per TP rank.
    wrd=$(cat $VLLM_D/out/worker-$r-*.stats 2>/dev/null | jq -sc . 2>/dev/null || echo '[]')
    ok=false  # every due tick of the window counted, released or skipped
    [ $src -eq 0 ] && [ "$(jq '.ticks == .ticks_expected and .steps + .skipped == .ticks and .steps > 0' "$f")" = true ] && ok=true
    $peer_ok || ok=false
    result vllm-$cfg-r$round-dp$r "$(jq -c --arg c "$cfg" --argjson r "$r" --argjson sel "$n_want" --arg st "$state" \
      --argjson round $round --argjson preempts $preempts --argjson bogo "${bogo:-0}" --argjson bogo_s "${bogo_s:-0}" --argjson hogs $RUN_HOGS --argjson disp "$disp" --argjson ok $ok --argjson idle "$idle_pct" --argjson sys "$sys_pct" --argjson wrd "$wrd" \
      '{scenario: "vllm", config: $c, round: $round, wakeup_preempts: $preempts, dp_rank: $r, sched_ext: $st, selected_threads: $sel, stress_hogs: $hogs,
        stress_bogo_ops: $bogo, stress_bogo_ops_per_s: $bogo_s, cpu_idle_pct: $idle, cpu_system_pct: $sys, workers_run_delay: $wrd, scheduler_stats: $disp} + . + {pass: $ok}' "$f")"
    sed "s/^/C2C-VLLM-CSV $cfg-r$round $r /" $VLLM_D/out/engine-$r.csv
  done
  [ -f $VLLM_D/out/engine-0.json ] || { cat $VLLM_D/standin.err; result vllm-$cfg "{\"scenario\":\"vllm\",\"config\":\"$cfg\",\"error\":\"no engine results (rc $src)\",\"pass\":false}"; }
  $peer_ok || { echo "C2C-NOTE vllm $cfg: $VLLM_PEER was not the loaded scheduler for the whole window"; sed "s/^/C2C-PEER-LOG $cfg /" $VLLM_D/peer.log | tail -n 40; }
  [ -z "$VLLM_PEER" ] || peer_stop
  kill -TERM $DPID; wait $DPID 2>/dev/null
  wait_state disabled 100
}

run_vllm() {
  for a in $(cat /proc/cmdline); do
    case "$a" in
      c2c.vllm_ms=*) VLLM_MS=${a#c2c.vllm_ms=} ;;
      c2c.vllm_hogs=*) VLLM_HOGS=${a#c2c.vllm_hogs=} ;;
      c2c.vllm_loop=*) VLLM_LOOP=$(echo "${a#c2c.vllm_loop=}" | tr , ' ') ;;
      c2c.vllm_configs=*) VLLM_CONFIGS=$(echo "${a#c2c.vllm_configs=}" | tr , ' ') ;;
      c2c.vllm_rounds=*) VLLM_ROUNDS=${a#c2c.vllm_rounds=} ;;
      c2c.vllm_trace_ms=*) VLLM_TRACE_MS=${a#c2c.vllm_trace_ms=} ;;
    esac
  done
  for b in claim2cored claim2core c2c-vllm-standin stress-ng; do
    command -v $b >/dev/null || { result vllm "{\"scenario\":\"vllm\",\"error\":\"$b missing from the initramfs\",\"pass\":false}"; return; }
  done
  mkdir -p $VLLM_DIR
  echo "C2C-NOTE vllm: configurations $VLLM_CONFIGS, $VLLM_ROUNDS rounds, $VLLM_MS ms each, stress-ng --cpu $VLLM_HOGS, stand-in $VLLM_LOOP"
  round=1
  while [ $round -le "$VLLM_ROUNDS" ]; do
    for c in $VLLM_CONFIGS; do
      RUN_HOGS=$VLLM_HOGS VLLM_PEER=""
      obj=/c2c/claim2core.bpf.o
      case $c in *-base) obj=/c2c/base.bpf.o ;; esac
      if [ ! -f $obj ]; then
        result vllm-$c "{\"scenario\":\"vllm\",\"config\":\"$c\",\"error\":\"no $obj (C2C_VM_BASE_OBJECT)\",\"pass\":false}"
        continue
      fi
      case ${c%-base} in
        # The floor: EEVDF without stress-ng (what the guest's steps cost under TCG, uncontended).
        eevdf-idle) RUN_HOGS=0; vllm_run eevdf-idle off none $obj ;;
        eevdf) vllm_run eevdf off none $obj ;;
        claim2core) vllm_run $c auto none $obj ;;
        adapter) vllm_run $c auto "" $obj vllm.yaml workers-throughput.yaml ;;
        adapter-workers-lc) vllm_run $c auto workers-lc $obj vllm.yaml workers-latency.yaml ;;
        # The adapter with boost inheritance on the busy loop (issue 43 item 3): its Workers inherit.
        adapter-inherit) vllm_run $c auto "" $obj vllm.yaml workers-throughput.yaml engine-core-inherit.yaml ;;
        # The sched_ext peers (issue 43 item 5): no claim2core scheduler, the stand-in and the hogs as in eevdf.
        scx-lavd|scx-bpfland) VLLM_PEER=$c; vllm_run $c off none $obj ;;
        *) result vllm-$c "{\"scenario\":\"vllm\",\"config\":\"$c\",\"error\":\"unknown configuration\",\"pass\":false}" ;;
      esac
    done
    round=$((round + 1))
  done
}

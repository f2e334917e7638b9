# The `daemon` scenario, sourced by guest-init.sh (busybox sh): claim2cored on a kernel with
# sched_ext. It loads the scheduler itself (scheduler: auto, on its own pin root), the CLI reports
# it enforcing, the seed's vLLM node policy reaches APPLIED with the two EngineCore threads' entries
# in the pinned map, the scheduler's stats count dispatches of their class (latency-critical), and
# SIGTERM does what spec/daemon.md says: the daemon detaches the scheduler (the kernel disables it,
# SCX_EXIT_UNREG), the pins stay, every task keeps running. A second start on the same state dir
# loads the scheduler again and restores the intent (INV-7); SysRq-S then throws the scheduler out
# and the daemon, still running, reports the exit kind and reason in Status.
#
# Needs /c2c/claim2cored, /c2c/claim2core, /c2c/c2c-fake-vllm, /c2c/vllm-enginecore.yaml and the
# helpers of guest-init.sh (result, wait_state, jget).

DAEMON_DIR=/tmp/c2cd
DAEMON_PIN=/sys/fs/bpf/c2c-daemon
export CLAIM2CORE_SOCKET=$DAEMON_DIR/claim2cored.sock

# retry <tenths of seconds> <command...>: until the command succeeds.
retry() {
  n=$1; shift
  i=0
  while [ $i -lt "$n" ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; i=$((i+1)); done
  return 1
}

start_daemon() {  # start_daemon <log>: sets DPID; false when the CLI never reaches it
  claim2cored --config $DAEMON_DIR/claim2cored.yaml >"$1" 2>&1 &
  DPID=$!
  retry 300 claim2core status
}

intent_applied() {  # the vllm-enginecore intent is APPLIED with both engine entries in the map
  it=$(claim2core get intents -o json | jq -c '.items[] | select(.policy == "vllm-enginecore")')
  [ "$(jget "$it" .state)" = APPLIED ] && [ "$(jget "$it" .appliedEntries)" = 2 ]
}

map_has_engines() {  # both EngineCore TIDs have an entry of class 1 (latency-critical) in the map
  c2c-mirror-tool --pin-root $DAEMON_PIN dump >/tmp/c2cd-map 2>/dev/null || return 1
  grep -q "^$E0 .*class=1 " /tmp/c2cd-map && grep -q "^$E1 .*class=1 " /tmp/c2cd-map
}

threads_alive() {  # the fake vLLM process and all six of its threads still exist
  kill -0 "$VLLM" 2>/dev/null && [ "$(ls /proc/$VLLM/task | wc -l)" -eq 6 ]
}

uptime_ms() { awk '{printf "%d", $1 * 1000}' /proc/uptime; }
mark() { echo "C2C-NOTE daemon +$(( $(uptime_ms) - DAEMON_T0 )) ms: $1"; }

run_daemon_scenario() {
  DAEMON_T0=$(uptime_ms)
  for b in claim2cored claim2core c2c-fake-vllm; do
    if ! command -v $b >/dev/null; then
      result daemon "{\"scenario\":\"daemon\",\"error\":\"$b missing from the initramfs\",\"pass\":false}"
      return
    fi
  done
  if [ "$(cat /sys/kernel/sched_ext/state)" != disabled ]; then
    result daemon "{\"scenario\":\"daemon\",\"error\":\"another scheduler is loaded\",\"pass\":false}"
    return
  fi
  mkdir -p $DAEMON_DIR
  # The seed's node name, so examples/policies/vllm-enginecore.yaml applies as written. Task
  # discovery as shipped (events): the tracepoint and iterator objects from /c2c, on 6.12's own
  # tracepoints; rescans every 500 ms besides (a process title changes without a tracepoint).
  cat >$DAEMON_DIR/claim2cored.yaml <<EOF
node_name: dgx-spark-gb10
socket: $CLAIM2CORE_SOCKET
state_dir: $DAEMON_DIR/state
pin_root: $DAEMON_PIN
scheduler: auto
scheduler_object: /c2c/claim2core.bpf.o
bpf_dir: /c2c
rescan_interval: 500ms
readback_interval: 1s
EOF

  # 1. Start: the daemon loads the scheduler and says it enforces the maps.
  started=false; start_daemon $DAEMON_DIR/daemon1.log && started=true
  mark "daemon up"
  st=$(claim2core status -o json 2>/dev/null || echo '{}')
  state=$(cat /sys/kernel/sched_ext/state); ops=$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)
  enforcing=$(jget "$st" '.schedulerEnforcing // false'); sstate=$(jget "$st" '.schedulerState // ""')
  # The startup line says how tasks are found: the tracepoints, not the fallback to rescans.
  discovery=$(sed -n 's/.*; tasks: //p' $DAEMON_DIR/daemon1.log | head -n 1)
  events=false; case "$discovery" in "BPF tracepoints"*) events=true ;; esac
  # The policy map's compare-and-delete program (policy_maps.bpf.o) loads on this kernel: the
  # daemon warns when it falls back to comparing against a read of the map.
  kdelete=true; grep -q "deletes compare against a read" $DAEMON_DIR/daemon1.log && kdelete=false
  ok=false
  [ $started = true ] && [ "$enforcing" = true ] && [ "$sstate" = enabled ] && [ "$state" = enabled ] &&
    [ "$ops" = claim2core ] && [ $events = true ] && [ $kdelete = true ] && ok=true
  result daemon_load "{\"scenario\":\"daemon_load\",\"started\":$started,\"scheduler_enforcing\":$enforcing,\"status_scheduler_state\":\"$sstate\",\"state\":\"$state\",\"ops\":\"$ops\",\"message\":$(echo "$st" | jq '.schedulerMessage // ""'),\"discovery\":$(echo "$discovery" | jq -R .),\"tracepoints\":$events,\"kernel_compare_delete\":$kdelete,\"pass\":$ok}"
  if [ $ok != true ]; then
    sed 's/^/C2C-DAEMON-LOG /' $DAEMON_DIR/daemon1.log
    kill -TERM $DPID 2>/dev/null; wait $DPID 2>/dev/null
    return
  fi

  # 2. The seed's policy on a vLLM-like process: Applied, the engines' entries in the map, and the
  #    scheduler dispatching their class.
  c2c-fake-vllm >$DAEMON_DIR/vllm.out &
  VLLM=$!
  retry 100 grep -qx ready $DAEMON_DIR/vllm.out
  E0=$(awk '$2 == "EngineCore_DP0" {print $1}' $DAEMON_DIR/vllm.out)
  E1=$(awk '$2 == "EngineCore_DP1" {print $1}' $DAEMON_DIR/vllm.out)
  mark "fake vLLM ready"
  s0=$(c2c-vm-tool stats --pin-root $DAEMON_PIN)
  mark "stats read"
  claim2core status >/dev/null 2>&1
  mark "one claim2core status"
  claim2core apply -f /c2c/vllm-enginecore.yaml >$DAEMON_DIR/apply.out 2>&1; arc=$?
  applied=false; retry 200 intent_applied && applied=true
  mark "intent applied"
  inmap=false; retry 50 map_has_engines && inmap=true
  mark "map read"
  sleep 2  # the engines wake every 50 ms
  s1=$(c2c-vm-tool stats --pin-root $DAEMON_PIN)
  lcd=$(( $(jget "$s1" '.dispatched["latency-critical"]') - $(jget "$s0" '.dispatched["latency-critical"]') ))
  ok=false
  [ $arc -eq 0 ] && [ $applied = true ] && [ $inmap = true ] && [ $lcd -gt 0 ] && ok=true
  result daemon_policy "{\"scenario\":\"daemon_policy\",\"engine_tids\":[${E0:-0},${E1:-0}],\"apply_rc\":$arc,\"intent_applied\":$applied,\"entries_in_map\":$inmap,\"lc_dispatches\":$lcd,\"pass\":$ok}"
  [ $ok = true ] || { cat $DAEMON_DIR/apply.out /tmp/c2cd-map; claim2core get intents; }

  # 3. SIGTERM (spec/daemon.md, Signals): the daemon exits 0, detaching the scheduler (UNREG), and
  #    keeps the pins; every task keeps running (the spin probe and the fake vLLM's threads).
  mark "policy checked"
  c2c-vm-tool spin --duration-ms 3000 >/tmp/c2cd-spin &
  SPIN=$!
  sleep 1
  kill -TERM $DPID; wait $DPID; drc=$?
  wait $SPIN
  state=$(cat /sys/kernel/sched_ext/state)
  pins=false; [ -e $DAEMON_PIN/c2c_policy ] && [ -e $DAEMON_PIN/c2c_stats ] && pins=true
  kept=false; map_has_engines && kept=true
  alive=false; threads_alive && alive=true
  ok=false
  [ $drc -eq 0 ] && [ "$state" = disabled ] && [ $pins = true ] && [ $kept = true ] && [ $alive = true ] &&
    grep -q '"pass":true' /tmp/c2cd-spin && ok=true
  result daemon_sigterm "{\"scenario\":\"daemon_sigterm\",\"daemon_rc\":$drc,\"state\":\"$state\",\"pins_kept\":$pins,\"entries_kept\":$kept,\"vllm_threads_alive\":$alive,\"spin\":$(cat /tmp/c2cd-spin),\"pass\":$ok}"
  [ $ok = true ] || sed 's/^/C2C-DAEMON-LOG /' $DAEMON_DIR/daemon1.log

  # 4. Restart on the same state: the scheduler is loaded again, the intent comes back APPLIED
  #    (INV-7); SysRq-S disables the scheduler and Status reports the exit kind and reason while
  #    the daemon keeps serving; tasks keep running.
  mark "sigterm checked"
  started=false; start_daemon $DAEMON_DIR/daemon2.log && started=true
  mark "daemon up again"
  enf1=$(claim2core status -o json 2>/dev/null | jq -r '.schedulerEnforcing // false')
  restored=false; retry 100 intent_applied && retry 50 map_has_engines && restored=true
  mark "intent restored"
  echo S >/proc/sysrq-trigger
  wait_state disabled 100
  st=""; i=0
  while [ $i -lt 50 ]; do
    st=$(claim2core status -o json 2>/dev/null || echo '{}')
    [ -n "$(jget "$st" '.schedulerExitReason // ""')" ] && break
    sleep 0.1; i=$((i+1))
  done
  enf2=$(jget "$st" '.schedulerEnforcing // false'); reason=$(echo "$st" | jq '.schedulerExitReason // ""')
  alive=false; threads_alive && alive=true
  kill -TERM $DPID; wait $DPID; drc=$?
  ok=false
  [ $started = true ] && [ "$enf1" = true ] && [ $restored = true ] && [ "$enf2" = false ] &&
    echo "$reason" | grep -q '^"SYSRQ' && [ $alive = true ] && [ $drc -eq 0 ] && ok=true
  result daemon_exit_reason "{\"scenario\":\"daemon_exit_reason\",\"restarted_enforcing\":$enf1,\"intent_restored\":$restored,\"enforcing_after_sysrq\":$enf2,\"exit_reason\":$reason,\"vllm_threads_alive\":$alive,\"daemon_rc\":$drc,\"pass\":$ok}"
  [ $ok = true ] || sed 's/^/C2C-DAEMON-LOG /' $DAEMON_DIR/daemon2.log

  kill $VLLM; wait $VLLM 2>/dev/null
  echo "C2C-NOTE daemon scenario took $(( $(uptime_ms) - DAEMON_T0 )) ms (guest clock)"
}

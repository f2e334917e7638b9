# Sourced by guest-init.sh (c2c.mode=experiment): the 2x2 experiment, raw runs only. Each run
# prints one "C2C-RESULT {json}" line; tests/vm/experiment.sh aggregates medians on the host.
#
# Cells: allocation (topology-aware off/on) x runtime scheduling (claim2core off/on).
#   allocation off: the latency-critical (LC) claim and the background claim both get CPUs 0-1
#                   (no locality information: one shared pool);
#   allocation on:  a fake device is local to CPU 1, so the LC claim gets cpuset {1} and the
#                   background claim the rest, {0};
#   scheduling off: the kernel's default scheduler (EEVDF), no policies;
#   scheduling on:  claim2core loaded, the LC probe boosted (class lc), stress-ng workers in
#                   class background.
# KPIs per run: the LC probe's timer lateness and its scheduling delay (schedstat run delay: runnable
# to running), p50/p99/p99.9 each (1 ms period), its context switches
# and migrations, system-wide context switches (/proc/stat ctxt), background bogo ops (and per
# second of real time, over stress-ng's whole run) and the background's CPU time during the probe's
# window (CPUs' worth: the share the goal compares, free of the cells' different setup phases).
# Then hackbench with no policies, default scheduler vs claim2core loaded.
EXP_RUNS=${EXP_RUNS:-3}
EXP_MS=${EXP_MS:-3000}
BG_WORKERS=${BG_WORKERS:-4}
HB_REPEAT=${HB_REPEAT:-3}

cg_set() {  # cg_set <name> <cpus>
  mkdir -p /sys/fs/cgroup/$1
  echo "$2" > /sys/fs/cgroup/$1/cpuset.cpus
}
bg_workers() {  # the TIDs whose parent is $BG (one awk: forks are slow in a contended guest)
  awk -v parent="$BG" '$4 == parent { split(FILENAME, f, "/"); print f[3] }' /proc/[0-9]*/stat 2>/dev/null
}
ctxt_total() { awk '$1=="ctxt"{print $2}' /proc/stat; }
bg_cpu_ticks() {  # CPU time (utime + stime, USER_HZ ticks) the background workers have received
  awk -v parent="$BG" '$4 == parent { t += $14 + $15 } END { print t + 0 }' /proc/[0-9]*/stat 2>/dev/null
}
uptime_cs() { awk '{ split($1, a, "."); print a[1] * 100 + substr(a[2] "00", 1, 2) }' /proc/uptime; }

exp_run() {  # exp_run <cell> <alloc on|off> <sched on|off> <rep>
  if [ "$2" = on ]; then cg_set lc 1; cg_set bg 0; else cg_set lc 0-1; cg_set bg 0-1; fi
  if [ "$3" = on ]; then start_sched || { failed="$failed sched-$1"; return; }; fi
  secs=$(( EXP_MS / 1000 + 120 ))  # outlives the wait for its workers and the probe; killed after
  sh -c "echo \$\$ > /sys/fs/cgroup/bg/cgroup.procs; exec stress-ng --cpu $BG_WORKERS --timeout ${secs}s --metrics-brief" \
    >/tmp/bg.out 2>&1 &
  BG=$!
  # stress-ng's workers are the children of $BG (busybox-static has no pgrep); wait (up to 15 s
  # on a slow guest) until all of them exist, in every cell, so each cell has the same contention.
  i=0
  while [ "$(bg_workers | wc -w)" -lt "$BG_WORKERS" ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
  nbg=0
  if [ "$3" = on ]; then
    # stress-ng may fork and reap short-lived children while it starts: a TID that is gone by
    # the time its policy is written is skipped, and the list is read again until every live
    # worker has its policy (three passes at most).
    done_tids=" "
    for pass in 1 2 3; do
      for t in $(bg_workers); do
        case "$done_tids" in *" $t "*) continue ;; esac
        if out=$(c2c-vm-tool put --tid "$t" --class background); then
          done_tids="$done_tids$t "
        elif [ -d /proc/$t ]; then
          echo "C2C-NOTE cell $1 rep $4: background policy for live tid $t: $out"
        fi
      done
    done
    for t in $(bg_workers); do
      case "$done_tids" in *" $t "*) nbg=$((nbg + 1)) ;; esac
    done
    policy="--class lc --boost-ms 60000"
  else
    policy=""
  fi
  # The background's CPU time over the probe's window (after the setup, which differs between
  # cells: B and D write policies first): its throughput share while the LC probe runs.
  c0=$(ctxt_total); w0=$(uptime_cs); t0=$(bg_cpu_ticks)
  lat=$(c2c-vm-tool latency --cgroup /sys/fs/cgroup/lc --duration-ms $EXP_MS $policy)
  c1=$(ctxt_total); w1=$(uptime_cs); t1=$(bg_cpu_ticks)
  # SIGINT: stress-ng stops its workers and still prints its metrics (bogo ops so far).
  kill -INT $BG 2>/dev/null
  wait $BG
  # bogo ops and bogo ops per second of real time: stress-ng's run length varies with the cell's
  # setup time, so the rate is what the table compares.
  ops=$(awk '$4=="cpu"{print $5}' /tmp/bg.out | tail -n 1)
  rate=$(awk '$4=="cpu"{print $9}' /tmp/bg.out | tail -n 1)
  [ -n "$ops" ] || ops=0
  [ -n "$rate" ] || rate=0
  if [ "$3" = on ]; then kill -TERM $SCHED_PID; wait $SCHED_PID; fi
  echo "C2C-RESULT {\"experiment\":\"2x2\",\"cell\":\"$1\",\"alloc\":\"$2\",\"sched\":\"$3\",\"rep\":$4,\"probe\":$lat,\"sys_ctx_switches\":$((c1 - c0)),\"bg_bogo_ops\":$ops,\"bg_bogo_ops_per_s\":$rate,\"bg_cpu_ticks_window\":$((t1 - t0)),\"window_cs\":$((w1 - w0)),\"bg_policies\":$nbg}"
  echo "$lat" | grep -q '"samples":0' && failed="$failed run-$1-$4"
  [ "$3" = on ] && [ $nbg -lt "$BG_WORKERS" ] && failed="$failed bg-policies-$1-$4($nbg/$BG_WORKERS)"
}

hb_run() {  # hb_run <sched on|off> <rep>: HB_REPEAT hackbench runs (one ~1 s run is noisy)
  [ "$1" = on ] && { start_sched || { failed="$failed hb-sched"; return; }; }
  k=1
  while [ $k -le "$HB_REPEAT" ]; do
    t=$(hackbench -g 4 -l 100 2>/dev/null | awk '/^Time:/{print $2}')
    [ -n "$t" ] || { failed="$failed hackbench-$1"; t=0; }
    echo "C2C-RESULT {\"experiment\":\"hackbench\",\"sched\":\"$1\",\"rep\":$2,\"run\":$k,\"seconds\":$t}"
    k=$((k + 1))
  done
  [ "$1" = on ] && { kill -TERM $SCHED_PID; wait $SCHED_PID; }
}

run_experiment() {
  echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control
  rep=1
  # Interleave cells so that drift in the (emulated) machine spreads over all of them.
  while [ $rep -le $EXP_RUNS ]; do
    exp_run A off off $rep
    exp_run B off on $rep
    exp_run C on off $rep
    exp_run D on on $rep
    hb_run off $rep
    hb_run on $rep
    rep=$((rep + 1))
  done
  # The run-time oracle (c2c_stats.oracle_*, pinned, summed over every cell run under the
  # scheduler) must have counted nothing (tests/vm/README.md).
  st=$(c2c-vm-tool stats)
  n=$(echo "$st" | jq '(.oracle_cpu_outside // 0) + (.oracle_stale_identity // 0) + (.oracle_past_lease // 0)' 2>/dev/null || echo -1)
  echo "C2C-RESULT {\"experiment\":\"oracle\",\"violations\":$n,\"pass\":$([ "$n" = 0 ] && echo true || echo false)}"
  [ "$n" = 0 ] || failed="$failed oracle($n)"
}

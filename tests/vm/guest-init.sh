#!/bin/busybox sh
# /init of the test-bed guest. Mounts the kernel file systems, runs the scenarios (or the
# experiment, c2c.mode=experiment on the kernel command line; c2c.mode=daemon runs only the
# claim2cored scenario), prints one "C2C-RESULT {json}"
# line per scenario and a final "C2C-VERDICT: PASS|FAIL <failed scenarios>", then powers off.
/bin/busybox --install -s /bin
export PATH=/c2c:/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
mkdir -p /sys/fs/bpf /sys/fs/cgroup
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
# Small pid space: the TID-reuse scenario wraps it in a few hundred thread creations.
echo 1024 > /proc/sys/kernel/pid_max
echo 9 > /proc/sys/kernel/printk 2>/dev/null

mode=scenarios
for arg in $(cat /proc/cmdline); do
  case "$arg" in c2c.mode=*) mode=${arg#c2c.mode=} ;; esac
done
echo "C2C-GUEST: kernel $(uname -r), $(nproc) CPUs, sched_ext state $(cat /sys/kernel/sched_ext/state 2>/dev/null || echo absent), mode $mode"

# Latency figures need a continuous clocksource and high resolution timers on every CPU (see
# tests/vm/run-guest.sh). A boot whose LAPIC timer failed its check asks the host to retry,
# unless the host said this is the last try (c2c.timer=any).
clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
hres_cpus=$(grep -c "hres_active *: 1" /proc/timer_list)
if [ "$hres_cpus" -eq "$(nproc)" ]; then
  echo "C2C-TIMER: fine (clocksource $clocksource, high resolution timers on $hres_cpus/$(nproc) CPUs)"
elif grep -q "c2c.timer=any" /proc/cmdline || [ "$mode" = daemon ]; then  # daemon: no latency figures
  echo "C2C-TIMER: coarse (clocksource $clocksource, high resolution timers on $hres_cpus/$(nproc) CPUs); latencies are quantized to the 1 ms tick"
else
  echo "C2C-TIMER: coarse, retry (clocksource $clocksource, high resolution timers on $hres_cpus/$(nproc) CPUs)"
  reboot -f
fi

OBJ=/c2c/claim2core.bpf.o
# The mirror creates the pinned map set (as the daemon does before the scheduler starts); the
# scheduler's loader then reuses its c2c_policy and c2c_stats pins, and every policy the
# scenarios write goes through the mirror library (c2c-vm-tool links it).
export C2C_POLICY_MAPS_OBJ=/c2c/policy_maps.bpf.o
failed=""
# The run-time oracle (bpf/claim2core.bpf.c, c2c_stats.oracle_*): what it counted since the last
# result. Every scenario must leave it at 0; the stats map is pinned, so this spans scheduler loads.
oracle_seen=0
oracle_total() {
  o_st=$(c2c-vm-tool stats 2>/dev/null) || { echo "$oracle_seen"; return; }
  echo "$o_st" | jq '(.oracle_cpu_outside // 0) + (.oracle_stale_identity // 0) + (.oracle_past_lease // 0)' 2>/dev/null ||
    echo "$oracle_seen"
}
result() {  # result <name> <json>: print and record pass/fail; a scenario the oracle counted in fails
  o_now=$(oracle_total); o_delta=$((o_now - oracle_seen)); oracle_seen=$o_now
  [ "$o_delta" -ge 0 ] || o_delta=0  # the stats map was re-created (none of ours so far)
  o_json="$2"
  case "$1" in
    mutant-*) ;;  # the mutant's own check judges it (below)
    *) o_json=$(echo "$2" | jq -c --argjson n "$o_delta" '. + {oracle_violations: $n} | if $n > 0 then .pass = false else . end' 2>/dev/null) || o_json="$2" ;;
  esac
  echo "C2C-RESULT $o_json"
  echo "$o_json" | jq -e '.pass == true' >/dev/null 2>&1 || failed="$failed $1"  # the top-level pass: a nested one (spin's) must not count
}
wait_state() {  # wait_state <state> <tenths of seconds>
  i=0
  while [ "$(cat /sys/kernel/sched_ext/state)" != "$1" ] && [ $i -lt $2 ]; do sleep 0.1; i=$((i+1)); done
  [ "$(cat /sys/kernel/sched_ext/state)" = "$1" ]
}
jget() { echo "$1" | jq -r "$2"; }
[ -f /c2c/daemon-guest.sh ] && . /c2c/daemon-guest.sh

# The test device behind the pxb-pcie root on NUMA node 1 (tests/vm/run-guest.sh): qemu's edu,
# PCI id 1234:11e8.
prefer_device() {
  for d in /sys/bus/pci/devices/*; do
    [ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x11e8 ] && { basename "$d"; return; }
  done
  echo none
}

# Per program, its run time and runs between two `c2c-vm-tool progs` snapshots (the kernel's BPF
# stats on): {name: {ns, runs}}; null when a snapshot is not JSON. The experiment's hackbench cost
# (experiment-guest.sh) and --mode cost (run_cost) read their callbacks' cost through it.
prog_delta() {  # prog_delta <before> <after>
  jq -c -n --argjson a "$1" --argjson b "$2" '$b.programs | with_entries(.value = {ns: (.value.run_time_ns - ($a.programs[.key].run_time_ns // 0)), runs: (.value.run_cnt - ($a.programs[.key].run_cnt // 0))})' 2>/dev/null || echo null
}
start_sched() {  # start_sched [object]: the scheduler (default $OBJ) runs in the background
  c2c-sched --object "${1:-$OBJ}" --stats >/tmp/sched.out 2>/tmp/sched.err &
  SCHED_PID=$!
  # Until enabled, or the loader gave up (the verifier refused, or the kernel ejected the scheduler
  # before this shell got to look: a seeded bug's watchdog exit), or 60 s: the verifier takes ~8 s
  # under TCG on a quiet host, and ~30-40 s when the host's cores are shared with other work
  # (issue 44 item 7: the guest no longer runs alone in the suite). It was a fixed 15 s.
  i=0
  while [ "$(cat /sys/kernel/sched_ext/state)" != enabled ] && [ $i -lt 600 ] && kill -0 $SCHED_PID 2>/dev/null; do
    sleep 0.1; i=$((i+1))
  done
  [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && return
  # Not loaded: the loader's own words (the verifier's log ends there) go to the console.
  tail -n 60 /tmp/sched.err | sed 's/^/C2C-SCHED-ERR /'
  return 1
}

# The loader's integration test (tests/integration/vm_sched_loader_test.cpp) on this kernel:
# its guest tests must all run (none skipped) and pass.
run_loader_test() {
  C2C_SCHED_OBJECT=$OBJ vm_sched_loader_test --gtest_filter='VmSchedLoaderGuest.*' \
    --gtest_output=json:/tmp/loader.json >/tmp/loader.out 2>&1
  rc=$?
  grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|Expected|Which is|error" /tmp/loader.out | sed 's/^/C2C-GTEST /'
  n=$(jq '.tests' /tmp/loader.json 2>/dev/null || echo 0)
  nf=$(jq '.failures' /tmp/loader.json 2>/dev/null || echo 0)
  ns=$(jq '[.testsuites[].testsuite[] | select(.result == "SKIPPED")] | length' /tmp/loader.json 2>/dev/null || echo 0)
  ok=false; [ $rc -eq 0 ] && [ "$n" -gt 0 ] && [ "$nf" -eq 0 ] && [ "$ns" -eq 0 ] && ok=true
  result vm_sched_loader_test "{\"scenario\":\"vm_sched_loader_test\",\"gtest_rc\":$rc,\"tests\":$n,\"failures\":$nf,\"skipped\":$ns,\"pass\":$ok}"
}

run_scenarios() {
  # 0. The loader's own integration test, before anything else loads a scheduler.
  run_loader_test
  # 1. The scheduler loads and is ours (on the mirror's pins).
  mirror=$(c2c-mirror-tool open 2>&1); mrc=$?
  echo "C2C-MIRROR $mirror"
  start_sched
  reused=$(grep -o '"policy_map_reused":[a-z]*' /tmp/sched.out | cut -d: -f2)
  state=$(cat /sys/kernel/sched_ext/state); ops=$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)
  ok=false
  [ "$state" = enabled ] && [ "$ops" = claim2core ] && [ $mrc -eq 0 ] && [ "$reused" = true ] && ok=true
  result load "{\"scenario\":\"load\",\"state\":\"$state\",\"ops\":\"$ops\",\"enable_seq\":$(cat /sys/kernel/sched_ext/enable_seq),\"mirror_open_rc\":$mrc,\"policy_map_reused\":${reused:-false},\"pass\":$ok}"
  if [ $ok != true ]; then cat /tmp/sched.out /tmp/sched.err; return; fi
  # What the verifier made of it (instructions processed per callback): recorded, not judged.
  echo "C2C-VERIFIER $(c2c-vm-tool progs)"

  # 2. Boost under contention, inside a cpuset. The probe's cgroup allows only CPU 1; its policy
  #    names CPUs 0-1 and prefers CPU 0: it must still only ever run on CPU 1 (INV-6), checked
  #    from sched_getcpu() and /proc/<tid>/stat field 39. (cpumask_rejections counts here: every
  #    enqueue cuts the policy's masks to the task's one CPU and refuses CPU 0.)
  echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control
  mkdir -p /sys/fs/cgroup/lc && echo 1 > /sys/fs/cgroup/lc/cpuset.cpus
  stress-ng --cpu 4 --timeout 120s --quiet >/dev/null 2>&1 &
  STRESS=$!
  sleep 1
  unm=$(c2c-vm-tool latency --cgroup /sys/fs/cgroup/lc --duration-ms 3000)
  result latency_unboosted "$unm"
  # The control the boost is judged against: since issue 43 an unmatched sleeper preempts the hogs
  # itself (c2c_wakeup_preempts), so its wait no longer shows what a lease adds; a background
  # probe (the same masks, a class nobody preempts for) still waits behind them.
  base=$(c2c-vm-tool latency --cgroup /sys/fs/cgroup/lc --duration-ms 3000 --class background --allowed 0-1 --preferred 0)
  result latency_background "$base"
  s0=$(c2c-vm-tool stats)
  boost=$(c2c-vm-tool latency --cgroup /sys/fs/cgroup/lc --duration-ms 3000 --class lc --boost-ms 60000 --allowed 0-1 --preferred 0)
  s1=$(c2c-vm-tool stats)
  result latency_boosted "$boost"
  kill $STRESS; wait $STRESS 2>/dev/null
  b99=$(jget "$base" .p99_us); x99=$(jget "$boost" .p99_us)
  b50=$(jget "$base" .p50_us); x50=$(jget "$boost" .p50_us)
  rej=$(( $(jget "$s1" .cpumask_rejections) - $(jget "$s0" .cpumask_rejections) ))
  lcd=$(( $(jget "$s1" '.dispatched["latency-critical"]') - $(jget "$s0" '.dispatched["latency-critical"]') ))
  bin=$(jget "$boost" .inside_cpuset)
  u50=$(jget "$unm" .p50_us); u99=$(jget "$unm" .p99_us)
  # The median must at least halve against the background probe. p99 is reported, not asserted:
  # under TCG on a busy host the tail is dominated by the host descheduling the guest's vCPU threads.
  ok=false; [ $((x50 * 2)) -lt "$b50" ] && [ $lcd -gt 0 ] && [ "$bin" = true ] && ok=true
  result boost_enforced "{\"scenario\":\"boost_enforced\",\"p50_us_unmatched\":$u50,\"p99_us_unmatched\":$u99,\"p50_us_unboosted\":$b50,\"p50_us_boosted\":$x50,\"p99_us_unboosted\":$b99,\"p99_us_boosted\":$x99,\"cpumask_rejections\":$rej,\"lc_dispatches\":$lcd,\"inside_cpuset\":$bin,\"pass\":$ok}"

  # 3. A TID reused by a new thread gets no policy (INV-2).
  result tid_reuse "$(c2c-vm-tool reuse)"

  # 4. A slice-only policy changes the slice; an untracked task runs the default slice while the
  #    map holds an entry and scx_simple's without one (c2c_untracked_slice).
  result slice "$(c2c-vm-tool slice --cpu 1 --slice-us 30000 --duration-ms 1000)"

  # 4b. A boosted CPU hog does not starve an unmatched and a background hog on its CPU (INV-8):
  #     the boost budget and the starvation bound both engage, nobody waits 500 ms.
  result starve "$(c2c-vm-tool starve --cpu 1 --duration-ms 2000)"
  #     And without the boosted hog: only the normal queue's hog competes with the background,
  #     which dispatch then serves without the rescue's reads; the bound must still serve it.
  result starve_no_boost "$(c2c-vm-tool starve --cpu 1 --duration-ms 1000 --no-boost)"

  # 4c. Entries the scheduler must not boost by: another ABI version's (INV-2) and a lease that ran
  #     out (INV-8). The scheduler ignores / expires them and the oracle counts nothing.
  result stale "$(c2c-vm-tool stale --cpu 1 --duration-ms 1500)"

  # 4d. Preference (issue #16): a probe whose policy prefers the CPUs local to the PCI device on
  #     NUMA node 1 spends >= 95 % of its CPU time there (the scheduler's per-task counters),
  #     the no-policy baseline does not, and a saturated preferred CPU spills only past the bound.
  if grep -q "c2c.topology=0" /proc/cmdline; then
    echo "C2C-NOTE prefer: skipped (C2C_VM_TOPOLOGY=0: one NUMA node, no PCI device)"
  else
    result prefer "$(c2c-vm-tool prefer --device "$(prefer_device)" --duration-ms 1000)"
  fi

  # 4e. A boosted task woken by a sync wakeup (a pipe's reader by its writer) preempts the writer
  #     on the writer's CPU; the unboosted control waits for the writer's slice (it proves the
  #     wakeup went there, where scx_bpf_select_cpu_dfl reports a busy CPU as idle).
  result syncwake "$(c2c-vm-tool syncwake --cpu 0)"

  # 4f. Boost inheritance (issue 43 item 3): a boosted writer's reader (an entry of its own, class
  #     normal) inherits a boost only when the writer's entry opted in, and its counters name the writer.
  result inherit "$(c2c-vm-tool inherit --cpu 0)"

  # 5a. Unloading: every task keeps running; the loader reports UNREG.
  c2c-vm-tool spin --duration-ms 3000 >/tmp/spin1 &
  SPIN=$!
  sleep 1
  kill -TERM $SCHED_PID; wait $SCHED_PID; rc=$?
  wait $SPIN
  state=$(cat /sys/kernel/sched_ext/state)
  exitline=$(grep '"event":"exit"' /tmp/sched.out)
  kind=$(jget "$exitline" .exit.exit_kind)
  ok=false; [ $rc -eq 0 ] && [ "$state" = disabled ] && [ "$kind" = UNREG ] && grep -q '"pass":true' /tmp/spin1 && ok=true
  result unload "{\"scenario\":\"unload\",\"loader_rc\":$rc,\"state\":\"$state\",\"exit_kind\":\"$kind\",\"spin\":$(cat /tmp/spin1),\"pass\":$ok}"
  echo "C2C-STATS $(jget "$exitline" .stats | tr -d '\n ')"

  # 5b. Failure: the kernel throws the scheduler out (sysrq-S); tasks keep running, the loader
  #     reports SYSRQ and exits 2.
  if start_sched; then
    c2c-vm-tool spin --duration-ms 3000 >/tmp/spin2 &
    SPIN=$!
    sleep 1
    echo S > /proc/sysrq-trigger
    wait $SCHED_PID; rc=$?
    wait $SPIN
    state=$(cat /sys/kernel/sched_ext/state)
    kind=$(jget "$(grep '"event":"exit"' /tmp/sched.out)" .exit.exit_kind)
    ok=false; [ $rc -eq 2 ] && [ "$state" = disabled ] && [ "$kind" = SYSRQ ] && grep -q '"pass":true' /tmp/spin2 && ok=true
    result kernel_disable "{\"scenario\":\"kernel_disable\",\"loader_rc\":$rc,\"state\":\"$state\",\"exit_kind\":\"$kind\",\"spin\":$(cat /tmp/spin2),\"pass\":$ok}"
  else
    result kernel_disable '{"scenario":"kernel_disable","error":"reload failed","pass":false}'
  fi

  # 5b'. A task that lost its context (user space deleted its task storage through a pidfd): the
  #      scheduler stops itself with scx_bpf_error naming the task (issue 44, the sched_ext idiom;
  #      it used to skip such a task silently), the loader reports ERROR_BPF, and the exit record
  #      carries the kernel's dump with the scheduler's own lines (ops.dump, dump_cpu, dump_task).
  wait_state disabled 50
  if start_sched; then
    out=$(c2c-vm-tool ctxgone --cpu 1)
    wait $SCHED_PID; rc=$?
    exitline=$(grep '"event":"exit"' /tmp/sched.out | tail -n 1)
    kind=$(jget "$exitline" .exit.exit_kind)
    msg=$(jget "$exitline" .exit.msg)
    tid=$(jget "$out" .tid)
    jget "$exitline" '.exit.dump // ""' >/tmp/dump.txt
    dsq_lines=$(grep -c '^ *c2c dsq ' /tmp/dump.txt)
    cpu_lines=$(grep -c '^ *c2c cpu ' /tmp/dump.txt)
    task_lines=$(grep -c '^ *c2c task ' /tmp/dump.txt)
    named=false; echo "$msg" | grep -q "no task context for pid $tid" && named=true
    ok=false
    [ $rc -eq 2 ] && [ "$kind" = ERROR_BPF ] && [ $named = true ] && [ "$dsq_lines" -eq 3 ] && [ "$cpu_lines" -ge 1 ] &&
      [ "$task_lines" -ge 1 ] && echo "$out" | grep -q '"pass":true' && ok=true
    result ctxgone "{\"scenario\":\"ctxgone\",\"loader_rc\":$rc,\"exit_kind\":\"$kind\",\"msg_names_task\":$named,\"dump_bytes\":$(wc -c </tmp/dump.txt),\"dump_dsq_lines\":$dsq_lines,\"dump_cpu_lines\":$cpu_lines,\"dump_task_lines\":$task_lines,\"tool\":$out,\"pass\":$ok}"
    # The scheduler's own lines of the dump, for the reader of the log (tests/vm/README.md).
    grep -E '^ *c2c (dsq|vtime|counters|oracle|cpu) ' /tmp/dump.txt | head -n 12 | sed 's/^/C2C-DUMP /'
  else
    result ctxgone '{"scenario":"ctxgone","error":"reload failed","pass":false}'
  fi

  # 5c. Each seeded bug in the scheduler's guards that a scenario can reach (bpf/sched.cmake,
  #     tests/mutants/kernel.tsv) and in its own file (tests/mutants/scheduler.tsv) is caught:
  #     loaded instead of the scheduler, its check (named in <name>.check) must fail.
  for m in /c2c/mutants/*.bpf.o; do
    [ -f "$m" ] || continue
    name=$(basename "$m" .bpf.o)
    check=$(cat "/c2c/mutants/$name.check" 2>/dev/null)
    case "$check" in
      starve) args="starve --cpu 1 --duration-ms 2000"; evidence='"threads"' ;;
      starve_no_boost) args="starve --cpu 1 --duration-ms 1000 --no-boost"; evidence='"threads"' ;;
      slice) args="slice --cpu 1 --slice-us 30000 --duration-ms 1000"; evidence='"long_rate_ratio"' ;;
      stale) args="stale --cpu 1 --duration-ms 1500"; evidence='"oracle"' ;;
      # Killed only when the control did wait (the wakeup reached the writer's CPU): a mutant
      # whose run never tested that path does not count as caught.
      syncwake) args="syncwake --cpu 0"; evidence='"control_waited":true' ;;
      # Killed when both series ran (their figures present) and the verdict failed: the control
      # inherited (no opt-in honoured) or the opted-in reader did not.
      inherit) args="inherit --cpu 0"; evidence='"opted_in"' ;;
      # Killed when the context was deleted and the scheduler went on as if nothing happened.
      ctxgone) args="ctxgone --cpu 1"; evidence='"deleted":true' ;;
      prefer)
        if grep -q "c2c.topology=0" /proc/cmdline; then
          echo "C2C-NOTE mutant-$name: skipped (its check, prefer, needs the guest's topology)"; continue
        fi
        args="prefer --device $(prefer_device) --duration-ms 1000"; evidence='"device_local_share"' ;;
      *) result "mutant-$name" "{\"scenario\":\"sched_mutant\",\"mutant\":\"$name\",\"error\":\"unknown check '$check'\",\"pass\":false}"; continue ;;
    esac
    wait_state disabled 50
    if start_sched "$m"; then
      out=$(c2c-vm-tool $args)
      kill -TERM $SCHED_PID; wait $SCHED_PID
      # Killed: the check ran to its verdict (its figures present) and failed.
      killed=false
      echo "$out" | grep -q "$evidence" && ! echo "$out" | grep -q '"pass":true' && killed=true
      result "mutant-$name" "{\"scenario\":\"sched_mutant\",\"mutant\":\"$name\",\"check\":\"$check\",\"$check\":$out,\"killed\":$killed,\"pass\":$killed}"
    else
      kill -TERM $SCHED_PID 2>/dev/null; wait $SCHED_PID
      # Loaded, then ejected by the kernel's watchdog for a runnable task it left waiting (so
      # fast that not even the wait for "enabled" got to run): the starvation the check looks
      # for, caught by the kernel itself. Killed; any other failure to load is not.
      if grep -q '"event":"enabled"' /tmp/sched.out && grep -q '"exit_kind":"ERROR_STALL"' /tmp/sched.out; then
        result "mutant-$name" "{\"scenario\":\"sched_mutant\",\"mutant\":\"$name\",\"check\":\"watchdog\",\"watchdog\":$(grep '"event":"exit"' /tmp/sched.out | tail -n 1),\"killed\":true,\"pass\":true}"
      else
        result "mutant-$name" "{\"scenario\":\"sched_mutant\",\"mutant\":\"$name\",\"error\":\"did not load\",\"pass\":false}"
      fi
    fi
  done

  # 6. Opt-in (run-scenarios.sh --with-daemon): claim2cored loads the scheduler itself, reports
  #    it, stops cleanly (tests/vm/daemon-guest.sh).
  if grep -q "c2c.daemon=1" /proc/cmdline; then
    wait_state disabled 50
    run_daemon_scenario
  fi
}

# Timer diagnosis: which clocksource and clock event device the guest uses, whether high
# resolution mode is active, and the probe's unloaded wakeup latency (c2c.mode=diag).
run_diag() {
  for f in available_clocksource current_clocksource; do
    echo "C2C-DIAG $f: $(cat /sys/devices/system/clocksource/clocksource0/$f)"
  done
  grep -E "^(Clock Event Device|  (mode|event_handler|max_delta_ns|min_delta_ns)):|hres_active|resolution" /proc/timer_list | sort | uniq -c | sed 's/^/C2C-DIAG /'
  echo "C2C-DIAG flags: $(grep -m1 ^flags /proc/cpuinfo)"
  dmesg | grep -iE "clocksource|tsc|apic|hpet|timer|hrtimer|switched|clockevent" | sed 's/^/C2C-DIAG /'
  result diag_latency "$(c2c-vm-tool latency --duration-ms 1000)"
  # The same probe under the scheduler: alone, then boosted against CPU hogs on its one CPU.
  c2c-mirror-tool open >/dev/null
  echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control
  mkdir -p /sys/fs/cgroup/lc && echo 1 > /sys/fs/cgroup/lc/cpuset.cpus
  if start_sched; then
    result diag_sched_alone "$(c2c-vm-tool latency --cgroup /sys/fs/cgroup/lc --duration-ms 1000 --class lc --boost-ms 60000)"
    sh -c "echo \$\$ > /sys/fs/cgroup/lc/cgroup.procs; exec stress-ng --cpu 2 --timeout 10s --quiet" &
    sleep 0.5
    result diag_sched_boosted_vs_hogs "$(c2c-vm-tool latency --cgroup /sys/fs/cgroup/lc --duration-ms 2000 --class lc --boost-ms 60000)"
    echo "C2C-DIAG stats $(c2c-vm-tool stats)"
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; grep c2c -A2 /sys/kernel/tracing/trace | head -40 | sed 's/^/C2C-TRACE /' 
    kill -TERM $SCHED_PID; wait $SCHED_PID
  fi
}

# The scheduler's cost per callback for each shape of task (run-scenarios.sh --mode cost): the
# wakeup probe for 2 s under no policy, a class-only policy, a boosted one, and a boosted one with
# CPU masks (the path a DRA policy with a device-local CPU takes), beside a CPU hog on CPU 0, with
# the kernel's BPF run-time stats on. Figures, not a verdict: each line has the probe's run delay
# and each callback's ns per call. With a base object ($C2C_VM_BASE_OBJECT on the host) the two
# objects alternate for three rounds: the emulated machine's speed moves by half between boots,
# so only figures of one boot compare.
run_cost() {
  c2c-mirror-tool open >/dev/null
  objects="new"
  [ -f /c2c/base.bpf.o ] && objects="base new"
  stress-ng --cpu 1 --taskset 0 --timeout 600s --quiet &
  hog=$!
  for round in 1 2 3; do
    for o in $objects; do
      obj=$OBJ
      [ $o = base ] && obj=/c2c/base.bpf.o
      if ! start_sched $obj; then
        failed="$failed sched-load-$o"
        kill -TERM $SCHED_PID 2>/dev/null; wait $SCHED_PID 2>/dev/null
        continue
      fi
      for shape in none class boosted placed; do
        case $shape in
          none) args="" ;;
          class) args="--class lc" ;;
          boosted) args="--class lc --boost-ms 60000" ;;
          placed) args="--class lc --boost-ms 60000 --allowed 0-1 --preferred 1" ;;
        esac
        echo 1 >/proc/sys/kernel/bpf_stats_enabled
        s0=$(c2c-vm-tool progs --struct-ops)
        r=$(c2c-vm-tool latency --duration-ms 2000 $args)
        s1=$(c2c-vm-tool progs --struct-ops)
        echo 0 >/proc/sys/kernel/bpf_stats_enabled
        per=$(prog_delta "$s0" "$s1")
        line=$(jq -c -n --arg o $o --arg s $shape --argjson k $round --argjson r "$r" --argjson p "$per" \
          '{scenario: "cost", object: $o, round: $k, shape: $s, run_delay: $r.run_delay, ctx_switches: $r.ctx_switches, programs: $p, pass: true}' 2>/dev/null)
        if [ -n "$line" ]; then echo "C2C-RESULT $line"; else failed="$failed cost-$o-$shape-$round"; fi
      done
      kill -TERM $SCHED_PID; wait $SCHED_PID
      wait_state disabled 100
    done
  done
  kill $hog 2>/dev/null; wait $hog 2>/dev/null
}

case "$mode" in
  scenarios) run_scenarios ;;
  diag) run_diag ;;
  cost) run_cost ;;
  experiment) c2c-mirror-tool open; . /c2c/experiment-guest.sh; run_experiment ;;
  vllm) . /c2c/vllm-guest.sh; run_vllm ;;  # the vLLM adapter's figure (vllm-guest.sh, issue #15)
  daemon)
    if grep -q "c2c.daemon=1" /proc/cmdline; then run_daemon_scenario; else failed=" daemon-not-in-initramfs"; fi ;;
  *) failed="unknown-mode-$mode" ;;
esac

if [ -z "$failed" ]; then echo "C2C-VERDICT: PASS"; else echo "C2C-VERDICT: FAIL$failed"; fi
sync
reboot -f

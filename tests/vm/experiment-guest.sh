# Sourced by guest-init.sh (c2c.mode=experiment): the 2x2 experiment as the seed defines it, raw
# data only. Every run prints "C2C-RESULT {json}" lines and its raw samples as
# "C2C-SAMPLES <cell> <rep> <workload> <metric> v1 v2 ..." lines (microseconds);
# tests/vm/experiment.sh turns them into CSVs, the table, the pictures and the goal verdicts.
#
# Cells (seed): A allocation off / runtime off, B allocation on / runtime off, C allocation off /
# runtime on, D both on. claim2cored runs in every cell (private socket, state dir, pin root), so
# the cells differ only in the two factors:
#   allocation on:  the DRA v1 objects of /c2c/exp (claims with status.allocation: a dra.cpu claim
#                   with its CPU set, a GPU with NUMA and PCIe locality; slices; pods) are fed to
#                   claim2cored the way the observer feeds it (c2c-exp-feed: the observer's cache,
#                   planner and sender); the pods' cgroup cpusets are what the bindings the daemon
#                   holds say (as the CPU driver sets them at NodePrepareResources);
#                   allocation off: no claims, both pods share CPUs 0-1;
#   runtime on:     claim2cored loads the sched_ext scheduler (scheduler: auto) and the runner
#                   applies the policies with the claim2core CLI: the DRAExecutionPolicy in D, the
#                   standalone NodeSchedulingPolicy in C, the background node policy in both and,
#                   in D, the background pod's DRAExecutionPolicy (background class), which wins
#                   there; a runtime-on cell whose scheduler did not load fails;
#                   runtime off: scheduler: off, no policies, the kernel's EEVDF.
# Nothing here writes a map: the daemon does; c2c-exp-watch only reads them.
#
# Workloads, one after the other in every cell, each while the background (stress-ng and a
# starvation probe, c2c-exp-work hog) loads both CPUs: the synthetic probe (1 ms sleeper), an
# LLM-like decode loop, a UPF-like UDP path between network namespaces, cyclictest. Runtime-on
# cells also measure apply latency, stale entries, restart recovery (D) and rollback latency.
EXP_RUNS=${EXP_RUNS:-3}
EXP_MS=${EXP_MS:-3000}
# Lists come from the kernel command line with commas for spaces (experiment.sh).
EXP_CELLS=$(echo "${EXP_CELLS:-A,B,C,D}" | tr , ' ')
EXP_WORKLOADS=$(echo "${EXP_WORKLOADS:-probe,decode,upf,cyclictest}" | tr , ' ')
EXP_HB=${EXP_HB:-1}
EXP_LIFECYCLE=${EXP_LIFECYCLE:-1}  # starvation probe, stale entries, restart, rollback (0: the smoke)
BG_WORKERS=${BG_WORKERS:-3}
HB_REPEAT=${HB_REPEAT:-3}
# Rounds of the hackbench series per run, each paired on its own and in the opposite order to the
# one before (experiment.sh --hackbench-rounds).
EXP_HB_ROUNDS=${EXP_HB_ROUNDS:-1}

EXP_DIR=/tmp/c2c-exp
EXP_PIN=/sys/fs/bpf/c2c-exp
export CLAIM2CORE_SOCKET=$EXP_DIR/claim2cored.sock
NODE=c2c-guest
LC_UID=0b6a1f2c-7d1e-4c3a-9a51-5e2f0c1d2a01
BG_UID=0b6a1f2c-7d1e-4c3a-9a51-5e2f0c1d2a02
LC_CPU_CLAIM=6a0d3c7e-1f42-4b8e-9d6a-0c1e2f3a4b01
BG_CPU_CLAIM=6a0d3c7e-1f42-4b8e-9d6a-0c1e2f3a4b03
# kubelet's systemd cgroup driver, Guaranteed QoS (tests/fixtures/dra/cgroup-path-examples.md).
LC_POD=/sys/fs/cgroup/kubepods.slice/kubepods-pod$(echo $LC_UID | tr - _).slice
BG_POD=/sys/fs/cgroup/kubepods.slice/kubepods-pod$(echo $BG_UID | tr - _).slice
LC_CG=$LC_POD/cri-containerd-4137150000000000000000000000000000000000000000000000000000000001.scope
BG_CG=$BG_POD/cri-containerd-4137150000000000000000000000000000000000000000000000000000000002.scope
EXT_CG=/sys/fs/cgroup/traffic  # the UPF's peers: the radio side and the data network
# Diagnostics (experiment.sh --diag): per window, the threads that ran and the scheduler's BPF
# time per callback (kernel.bpf_stats_enabled, which costs every callback two clock reads: the
# window's latencies are not the experiment's then).
EXP_DIAG=${EXP_DIAG:-0}

# Where a UPF packet can die: per network namespace (the node, ran, dn) UDP InDatagrams,
# InErrors and RcvbufErrors (/proc/net/snmp), and the CPUs' backlog drops and time squeezes
# (/proc/net/softnet_stat, hex, all namespaces), and the ARP table's failures. One "name value"
# per line.
in_ns() {  # in_ns <netns or ""> <command...>: the command in that namespace (the node's if "")
  n_ns=$1; shift
  if [ -n "$n_ns" ]; then $IP netns exec "$n_ns" "$@"; else "$@"; fi
}
udp_counters() {  # udp_counters <prefix> [netns]
  in_ns "$2" cat /proc/net/snmp 2>/dev/null |
    awk -v p="$1" '$1 == "Udp:" { if (!h) { for (i = 2; i <= NF; i++) col[$i] = i; h = 1; next }
      print p "_in", $col["InDatagrams"]; print p "_no_ports", $col["NoPorts"]; print p "_in_errors", $col["InErrors"]; print p "_rcvbuf_errors", $col["RcvbufErrors"] }'
}
link_counters() {  # link_counters <prefix> <device> [netns]: the device's packet and drop counters
  l_d=/sys/class/net/$2/statistics
  # One read of all four in the namespace; a missing device prints nothing.
  in_ns "$3" cat $l_d/tx_packets $l_d/tx_dropped $l_d/rx_packets $l_d/rx_dropped 2>/dev/null |
    awk -v p="$1" 'BEGIN { split("tx_packets tx_dropped rx_packets rx_dropped", f, " ") } NF { print p "_" f[NR], $1 }'
}
# The kernel's statistics files print hex counters; busybox awk has no strtonum.
HEX_AWK='function hex(s,   v, i, c) { v = 0; s = tolower(s)
  for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); v = v * 16 + c - 1 }
  return v }
'
net_counters() {
  udp_counters node; udp_counters ran ran; udp_counters dn dn
  link_counters n3 n3; link_counters n6 n6; link_counters n3ran n3-ran ran; link_counters n6dn n6-dn dn
  awk "$HEX_AWK"'{ d += hex($2); q += hex($3) } END { print "backlog_drops", d; print "time_squeezes", q }' /proc/net/softnet_stat
  # Packets dropped while their next hop's address was being resolved, and failed resolutions
  # (the ARP table's per-CPU statistics, summed).
  awk "$HEX_AWK"'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
       { f += hex($col["res_failed"]); u += hex($col["unresolved_discards"]) }
       END { print "arp_res_failed", f; print "arp_unresolved_discards", u }' /proc/net/stat/arp_cache 2>/dev/null
}
net_delta() {  # net_delta <before file> <after file>: a JSON object of the differences
  awk 'NR == FNR { b[$1] = $2; next } { s = s (s == "" ? "" : ",") "\"" $1 "\":" ($2 - b[$1]) } END { print "{" s "}" }' "$1" "$2"
}
uptime_ms() { awk '{ split($1, a, "."); printf "%d", a[1] * 1000 + substr(a[2] "00", 1, 2) * 10 }' /proc/uptime; }
ctxt_total() { awk '$1=="ctxt"{print $2}' /proc/stat; }
cg_usage_us() { awk '$1=="usage_usec"{print $2}' "$1/cpu.stat"; }
# Idle (+ iowait) time of all CPUs in ms (USER_HZ is 100 on x86): a CPU left idle while the
# background is runnable is what a scheduler that is not work-conserving costs the background.
idle_ms() { awk '$1=="cpu"{print ($5 + $6) * 10}' /proc/stat; }
# CPU time (user + system, ms) of a process: what claim2cored itself costs the node in a window.
proc_cpu_ms() { awk '{print ($14 + $15) * 10}' "/proc/$1/stat" 2>/dev/null || echo 0; }
retry() {  # retry <tenths of seconds> <command...>
  r_n=$1; shift; r_i=0
  while [ $r_i -lt "$r_n" ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; r_i=$((r_i + 1)); done
  return 1
}
progress() {  # the host prints these with an ETA (experiment.sh)
  echo "C2C-PROGRESS {\"cell\":\"$1\",\"rep\":$2,\"runs\":$EXP_RUNS,\"step\":$3,\"steps\":$EXP_STEPS,\"guest_ms\":$(uptime_ms)}"
}

# The device's locality as sysfs gives it: the guest's stand-in for the claim's GPU is qemu's
# `edu` PCI device (vendor 0x1234, device 0x11e8; EXP_DEVICE=vendor:device picks another), its
# NUMA node and PCIe root from sysfs, and that node's CPUs. Without it (a guest with one NUMA node
# and no such device) the device-local CPU time cannot be measured and is reported as such, never
# as 100 %.
exp_topology() {
  DEVICE_NODE="" DEVICE_PCI="" DEVICE_ROOT="" LOCAL_CPUS=""
  want=${EXP_DEVICE:-0x1234:0x11e8}
  for d in /sys/bus/pci/devices/*; do
    [ "$(cat "$d/vendor" 2>/dev/null):$(cat "$d/device" 2>/dev/null)" = "$want" ] || continue
    n=$(cat "$d/numa_node" 2>/dev/null)
    [ "$n" -ge 0 ] 2>/dev/null || continue
    DEVICE_NODE=$n DEVICE_PCI=${d##*/}
    DEVICE_ROOT=$(readlink -f "$d" | grep -o 'pci[0-9a-f]*:[0-9a-f]*' | head -n 1)
    break
  done
  [ -n "$DEVICE_NODE" ] && LOCAL_CPUS=$(cat /sys/devices/system/node/node$DEVICE_NODE/cpulist 2>/dev/null)
  NUMA_NODES=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
  [ "$NUMA_NODES" -gt 0 ] || NUMA_NODES=1
  echo "C2C-RESULT {\"experiment\":\"topology\",\"numa_nodes\":$NUMA_NODES,\"device\":\"$want\",\"device_pci\":\"$DEVICE_PCI\",\"device_node\":\"$DEVICE_NODE\",\"device_pcie_root\":\"$DEVICE_ROOT\",\"device_local_cpus\":\"$LOCAL_CPUS\",\"cpus\":$(nproc)}"
  mkdir -p $EXP_DIR/objects
  sed -e "s/@DEVICE_NUMA@/${DEVICE_NODE:-0}/" -e "s/@DEVICE_PCIE_ROOT@/${DEVICE_ROOT:-pci0000:00}/" \
    /c2c/exp/slices.yaml >$EXP_DIR/objects/slices.yaml
  cp /c2c/exp/claims.yaml /c2c/exp/pods.yaml $EXP_DIR/objects/
}

exp_cgroups() {
  echo +cpuset > /sys/fs/cgroup/cgroup.subtree_control
  mkdir -p "$LC_CG" "$BG_CG" "$EXT_CG"
  echo +cpuset > /sys/fs/cgroup/kubepods.slice/cgroup.subtree_control
  echo +cpuset > "$LC_POD/cgroup.subtree_control"
  echo +cpuset > "$BG_POD/cgroup.subtree_control"
}
set_cpus() {  # set_cpus <pod dir> <container dir> <cpus>
  echo "$3" > "$1/cpuset.cpus"
  echo "$3" > "$2/cpuset.cpus"
}

# UPF-like path: radio side (netns ran, the generator) --veth-- node (the forwarder, in the
# latency-critical pod) --veth-- data network (netns dn, the echo).
# iproute2's ip by its path: busybox-static's sh runs its own applets first, and its ip has
# neither netns nor veth.
IP=/c2c/ip
exp_network() {
  mkdir -p /run/netns && mount -t tmpfs run /run && mkdir -p /run/netns
  $IP link set lo up
  $IP netns add ran && $IP netns add dn || return 1
  $IP link add n3 type veth peer name n3-ran && $IP link set n3-ran netns ran || return 1
  $IP link add n6 type veth peer name n6-dn && $IP link set n6-dn netns dn || return 1
  $IP addr add 10.1.0.1/24 dev n3 && $IP link set n3 up
  $IP addr add 10.2.0.1/24 dev n6 && $IP link set n6 up
  $IP -n ran addr add 10.1.0.2/24 dev n3-ran && $IP -n ran link set n3-ran up && $IP -n ran link set lo up
  $IP -n dn addr add 10.2.0.2/24 dev n6-dn && $IP -n dn link set n6-dn up && $IP -n dn link set lo up
}

exp_daemon_start() {  # exp_daemon_start <auto|off> <log> [task discovery, default events]: DPID
  cat >$EXP_DIR/claim2cored.yaml <<EOF
node_name: $NODE
socket: $CLAIM2CORE_SOCKET
state_dir: $EXP_DIR/state
pin_root: $EXP_PIN
scheduler: $1
scheduler_object: /c2c/claim2core.bpf.o
bpf_dir: /c2c
task_discovery: ${3:-events}
rescan_interval: 10s
readback_interval: 1s
EOF
  claim2cored --config $EXP_DIR/claim2cored.yaml >"$2" 2>&1 &
  DPID=$!
  retry 300 claim2core status || return 1
  sed -n 's/.*; tasks: /C2C-NOTE daemon task discovery: /p' "$2" | head -n 1
}
# "scheduler: auto" serves on without a scheduler that does not load, and whatever runs next would
# measure the kernel's own scheduler under claim2core's name: that is a failure, with the log.
exp_scheduler_up() {  # exp_scheduler_up <name of the failure> <daemon log> <log line prefix>
  wait_state enabled 150 && return 0
  failed="$failed $1"
  sed "s/^/$3/" "$2" | tail -n 40
  exp_daemon_stop
  return 1
}
exp_daemon_stop() {
  kill -TERM $DPID 2>/dev/null; wait $DPID 2>/dev/null
  wait_state disabled 100
}
intent_state() {  # intent_state <policy name>: its state
  claim2core get intents -o json 2>/dev/null | jq -r --arg p "$1" '[.items[] | select(.policy == $p) | .state] | first // ""'
}
intent_applied() { [ "$(intent_state "$1")" = APPLIED ]; }
binding_cpus() {  # binding_cpus <claim uid>: the CPU set the daemon holds for it
  claim2core get bindings -o json 2>/dev/null | jq -r --arg c "$1" '[.items[] | select(.claimUid == $c) | .cpus] | first // ""'
}

# Every thread's schedstat (run ns, wait ns, timeslices), its last CPU: "tid comm slices wait cpu run".
diag_threads() {
  for f in /proc/[0-9]*/task/[0-9]*; do
    read -r t_run t_wait t_slices <"$f/schedstat" 2>/dev/null || continue
    t_cpu=$(sed 's/.*) //' "$f/stat" 2>/dev/null | awk '{print $37}')
    echo "${f##*/} $(tr ' ' _ <"$f/comm") $t_slices $t_wait ${t_cpu:--1} $t_run"
  done
}
diag_begin() {  # diag_begin <sched on|off>
  diag_threads >$EXP_DIR/diag.0
  [ "$1" = on ] || return 0
  echo 1 >/proc/sys/kernel/bpf_stats_enabled
  DIAG_PROGS=$(c2c-vm-tool progs --struct-ops)
}
# The window's threads that ran (on a CPU other than 0, or more than 20 timeslices), by timeslices:
# what shared a CPU with the measured one; and each scheduler callback's runs and ns.
diag_end() {  # diag_end <cell> <workload> <sched on|off>
  if [ "$3" = on ]; then
    echo "C2C-DIAG $1 $2 callbacks $(prog_delta "$DIAG_PROGS" "$(c2c-vm-tool progs --struct-ops)")"
    echo 0 >/proc/sys/kernel/bpf_stats_enabled
  fi
  diag_threads >$EXP_DIR/diag.1
  awk -v tag="C2C-DIAG $1 $2" 'NR == FNR { s[$1] = $3; w[$1] = $4; r[$1] = $6; next }
    { n = $3 - s[$1]; if (n > 0 && ($5 != 0 || n > 20))
        print tag, "tid", $1, $2, "cpu", $5, "slices", n, "waited_us", int(($4 - w[$1]) / 1000), "ran_us", int(($6 - r[$1]) / 1000) }' \
    $EXP_DIR/diag.0 $EXP_DIR/diag.1 | sort -k9 -n -r | head -n 40
}

samples_out() {  # samples_out <cell> <rep> <workload> <file>
  [ -s "$4" ] && sed "s/^/C2C-SAMPLES $1 $2 $3 /" "$4"
}

# One workload under the cell's conditions; prints its result with the window's context switches,
# the scheduler's migration counter and the background's CPU time.
exp_workload() {  # exp_workload <cell> <alloc> <sched> <rep> <workload>
  cell=$1 w=$5 go=$EXP_DIR/go.$5 smp=$EXP_DIR/samples.$5
  rm -f "$go" "$smp"
  secs=$(( (EXP_MS + 999) / 1000 ))
  loc=${LOCAL_CPUS:+--local-cpus $LOCAL_CPUS}
  sink=""
  case $w in
    probe) cmd="c2c-exp-work probe --duration-ms $EXP_MS --start-file $go --samples $smp $loc" ;;
    # The decode loop runs four windows: a request every 250 ms gives 12 first tokens in one,
    # so a cell's pooled "p99" over three runs was its slowest single request.
    decode) cmd="c2c-exp-work decode --duration-ms $((4 * EXP_MS)) --step-ms 2 --work-us 300 --tokens 40 --burst-every-ms 250 --start-file $go --samples $smp $loc" ;;
    upf)
      # The forwarder and the echo run until the generator is done (SIGTERM below; the duration
      # is a bound only): a generator that fell behind its schedule (a normal task behind the
      # background) sent its last packets after a fixed window had closed, and they met no
      # socket (the NoPorts "loss" of cells C and D).
      cmd="c2c-exp-work upf-fwd --duration-ms $((EXP_MS + 30000)) --start-file $go $loc"
      sh -c "echo \$\$ > $EXT_CG/cgroup.procs; exec $IP netns exec dn c2c-exp-work upf-sink --duration-ms $((EXP_MS + 30000)) --start-file $go" >$EXP_DIR/sink.out 2>&1 &
      sink=$!
      sh -c "echo \$\$ > $EXT_CG/cgroup.procs; exec $IP netns exec ran c2c-exp-work upf-gen --duration-ms $EXP_MS --pps 1000 --start-file $go --samples $smp" >$EXP_DIR/gen.out 2>&1 &
      gen=$! ;;
    cyclictest)
      # cyclictest starts its measuring thread itself: it gets its entry once the daemon has its
      # fork event, so it runs twice as long and the first half of its cycles is dropped (below),
      # in every cell alike (a fixed count of cycles is not a fixed time on a slow guest).
      cmd="cyclictest -t1 -i1000 -d0 -D$((2 * secs)) -q -v" ;;
  esac
  if [ $w = cyclictest ]; then
    sh -c "echo \$\$ > $LC_CG/cgroup.procs; while [ ! -e $go ]; do sleep 0.01; done; exec $cmd" >$EXP_DIR/ct.out 2>&1 &
  else
    sh -c "echo \$\$ > $LC_CG/cgroup.procs; exec $cmd" >$EXP_DIR/w.out 2>&1 &
  fi
  WPID=$!
  sleep 0.3
  apply="null"
  if [ "$3" = on ] && [ $w = cyclictest ] && [ "$FIRST_LC" = 1 ]; then
    # cyclictest starts its measuring thread itself once it runs (after go): no tid to time the
    # apply by. In a plan whose first latency-critical workload is cyclictest the policy is
    # applied here all the same, before go, or the cell would run without it.
    claim2core apply -f "$LC_POLICY" >/dev/null 2>&1 || failed="$failed apply-$cell-$4"
    FIRST_LC=0
    retry 200 intent_applied exp-lc || failed="$failed intent-$cell-$4"
  fi
  if [ "$3" = on ] && [ $w != cyclictest ]; then
    if [ "$FIRST_LC" = 1 ]; then
      # Scheduler apply latency: `claim2core apply` -> the entry in the map -> its first dispatch.
      apply=$(c2c-exp-watch --pin-root $EXP_PIN apply --tid $WPID --timeout-ms 120000 -- claim2core apply -f "$LC_POLICY")
      akind=policy FIRST_LC=0
      retry 200 intent_applied exp-lc || failed="$failed intent-$cell-$4"
    else
      # The policy exists: the time until the daemon finds the new process and writes its entry.
      apply=$(c2c-exp-watch --pin-root $EXP_PIN apply --tid $WPID --timeout-ms 120000 -- true)
      akind=discovery
    fi
    apply=$(echo "$apply" | jq -c --arg k $akind '. + {kind: $k}' 2>/dev/null || echo null)
    echo "$apply" | grep -q '"first_dispatch_ms":[0-9]' || failed="$failed entry-$cell-$4-$w"
  fi
  s0=$(c2c-vm-tool stats --pin-root $EXP_PIN 2>/dev/null || echo '{}')
  [ $w = upf ] && net_counters >$EXP_DIR/net.before
  c0=$(ctxt_total); w0=$(uptime_ms); b0=$(cg_usage_us $BG_POD); l0=$(cg_usage_us $LC_POD); i0=$(idle_ms); d0=$(proc_cpu_ms $DPID)
  [ "$EXP_DIAG" = 1 ] && diag_begin "$3"
  touch "$go"
  if [ -n "$sink" ]; then
    wait $gen; sleep 0.2  # the generator waits 300 ms for stragglers itself
    kill -TERM $WPID 2>/dev/null; wait $WPID; wrc=$?
    kill -TERM $sink 2>/dev/null; wait $sink 2>/dev/null
  else
    wait $WPID; wrc=$?
  fi
  [ "$EXP_DIAG" = 1 ] && diag_end "$cell" "$w" "$3"
  c1=$(ctxt_total); w1=$(uptime_ms); b1=$(cg_usage_us $BG_POD); l1=$(cg_usage_us $LC_POD); i1=$(idle_ms); d1=$(proc_cpu_ms $DPID)
  s1=$(c2c-vm-tool stats --pin-root $EXP_PIN 2>/dev/null || echo '{}')
  # Every counter of the scheduler over the window (rescues, budget exhaustion, spills...): what
  # a cell's tail is made of; zeros left out.
  sdelta=$(jq -cn --argjson a "$s0" --argjson b "$s1" \
    '$b | with_entries(select(.value | type == "number") | .value -= ($a[.key] // 0) | select(.value != 0))' 2>/dev/null || echo null)
  smig=null  # the scheduler's own migration counter: only while it runs
  [ "$3" = on ] && smig=$(echo "$sdelta" | jq '.migrations // 0')
  case $w in
    upf) res=$(tail -n 1 $EXP_DIR/gen.out); fwd=$(tail -n 1 $EXP_DIR/w.out)
         sk=$(tail -n 1 $EXP_DIR/sink.out | jq -c . 2>/dev/null || echo null)
         net_counters >$EXP_DIR/net.after; net=$(net_delta $EXP_DIR/net.before $EXP_DIR/net.after)
         res=$(echo "$res" | jq -c --argjson f "$fwd" --argjson n "$net" --argjson s "$sk" '. + {forwarder: $f, sink: $s, net: $n}' 2>/dev/null ||
               echo '{"error":"upf output"}') ;;
    cyclictest)
      # -v: "<thread>: <cycle>: <latency us>" per cycle; the first half dropped (above).
      awk -F: 'NF == 3 && $2 ~ /^ *[0-9]+ *$/ { a[m++] = $3 + 0 }
               END { for (k = int(m / 2); k < m; k++) v[n++] = a[k];
                     for (i = 0; i < n; i += 256) { s = "latency_us"; for (k = i; k < n && k < i + 256; k++) s = s " " v[k]; print s } }' \
        $EXP_DIR/ct.out >"$smp"
      res=$(awk '{ $1 = ""; print }' "$smp" | tr ' ' '\n' | grep -v '^$' | sort -n |
            awk '{ v[n++] = $1 } END { if (n == 0) { print "{\"workload\":\"cyclictest\",\"samples\":0}"; exit }
                   q = "p50 0.5 p95 0.95 p99 0.99 p999 0.999"; split(q, a, " ");
                   s = "{\"workload\":\"cyclictest\",\"samples\":" n ",\"latency\":{\"n\":" n;
                   for (i = 1; i <= 8; i += 2) { r = int(a[i+1] * n + 0.999999); if (r < 1) r = 1; s = s ",\"" a[i] "_us\":" v[r-1] }
                   print s ",\"max_us\":" v[n-1] "}}" }') ;;
    *) res=$(tail -n 1 $EXP_DIR/w.out) ;;
  esac
  echo "$res" | jq -e . >/dev/null 2>&1 || res="{\"error\":$(echo "$res" | jq -R -s .)}"
  echo "C2C-RESULT {\"experiment\":\"2x2\",\"cell\":\"$cell\",\"alloc\":\"$2\",\"sched\":\"$3\",\"rep\":$4,\"workload\":\"$w\",\"rc\":$wrc,\"result\":$res,\"apply\":$apply,\"sys_ctx_switches\":$((c1 - c0)),\"sched_migrations\":$smig,\"sched_counters\":$sdelta,\"bg_cpu_us\":$((b1 - b0)),\"lc_cpu_us\":$((l1 - l0)),\"idle_ms\":$((i1 - i0)),\"daemon_cpu_ms\":$((d1 - d0)),\"window_ms\":$((w1 - w0))}"
  samples_out "$cell" "$4" "$w" "$smp"
  [ $wrc -eq 0 ] || failed="$failed $w-$cell-$4"
}

exp_run() {  # exp_run <cell> <alloc on|off> <sched on|off> <rep>
  cell=$1
  rm -rf $EXP_DIR/state
  if [ "$3" = on ]; then dmode=auto; else dmode=off; fi
  exp_daemon_start $dmode $EXP_DIR/daemon.log || { failed="$failed daemon-$cell-$4"; sed 's/^/C2C-DAEMON-LOG /' $EXP_DIR/daemon.log; return; }
  if [ "$3" = on ]; then exp_scheduler_up scheduler-$cell-$4 $EXP_DIR/daemon.log 'C2C-DAEMON-LOG ' || return; fi
  progress "$cell" "$4" 0
  lc_cpus=0-1 bg_cpus=0-1 feed=null
  if [ "$2" = on ]; then
    feed=$(c2c-exp-feed --socket $CLAIM2CORE_SOCKET --node $NODE $EXP_DIR/objects/slices.yaml \
             $EXP_DIR/objects/claims.yaml $EXP_DIR/objects/pods.yaml 2>$EXP_DIR/feed.err) || {
      failed="$failed feed-$cell-$4"; sed 's/^/C2C-FEED /' $EXP_DIR/feed.err; }
    lc_cpus=$(binding_cpus $LC_CPU_CLAIM) bg_cpus=$(binding_cpus $BG_CPU_CLAIM)
    [ -n "$lc_cpus" ] && [ -n "$bg_cpus" ] || { failed="$failed bindings-$cell-$4"; lc_cpus=0-1 bg_cpus=0-1; }
  fi
  set_cpus $LC_POD $LC_CG "$lc_cpus"
  set_cpus $BG_POD $BG_CG "$bg_cpus"
  echo "C2C-RESULT {\"experiment\":\"cell\",\"cell\":\"$cell\",\"rep\":$4,\"alloc\":\"$2\",\"sched\":\"$3\",\"feed\":$feed,\"lc_cpus\":\"$lc_cpus\",\"bg_cpus\":\"$bg_cpus\",\"scheduler_state\":\"$(cat /sys/kernel/sched_ext/state)\"}"
  LC_POLICY=/c2c/exp/node-policy.yaml
  [ "$2" = on ] && LC_POLICY=/c2c/exp/dra-policy.yaml
  FIRST_LC=1
  # The background's policy: with a claim (D) the pod-scoped DRA one (background class) wins over
  # the node policy (dra-before-node); without one (C) the node policy applies.
  bg_policy=exp-background
  if [ "$3" = on ]; then
    claim2core apply -f /c2c/exp/background-policy.yaml >/dev/null 2>&1
    if [ "$2" = on ]; then
      claim2core apply -f /c2c/exp/dra-background-policy.yaml >/dev/null 2>&1
      bg_policy=exp-bg
    fi
  fi
  sh -c "echo \$\$ > $BG_CG/cgroup.procs; exec stress-ng --cpu $BG_WORKERS --timeout 3600s --quiet" >/dev/null 2>&1 &
  BG=$!
  sh -c "echo \$\$ > $BG_CG/cgroup.procs; exec c2c-exp-work hog --duration-ms 3600000" >$EXP_DIR/hog.out 2>&1 &
  HOG=$!
  [ "$3" = on ] && { retry 200 intent_applied $bg_policy || failed="$failed bg-intent-$cell-$4"; }
  sleep 0.5
  step=1
  for w in $EXP_WORKLOADS; do
    exp_workload "$cell" "$2" "$3" "$4" "$w"
    progress "$cell" "$4" $step
    step=$((step + 1))
  done
  kill $HOG 2>/dev/null; wait $HOG 2>/dev/null
  [ "$EXP_LIFECYCLE" = 1 ] && exp_cell_end "$cell" "$2" "$3" "$4"
  kill -INT $BG 2>/dev/null; wait $BG 2>/dev/null
  exp_daemon_stop
}

exp_cell_end() {  # exp_cell_end <cell> <alloc> <sched> <rep>
  # The starvation probe over the whole cell: its longest time without the CPU.
  sh -c "echo \$\$ > $BG_CG/cgroup.procs; exec c2c-exp-work hog --duration-ms $EXP_MS --samples $EXP_DIR/samples.hog" >$EXP_DIR/hog.out 2>&1 &
  HOG=$!
  sh -c "echo \$\$ > $LC_CG/cgroup.procs; exec c2c-exp-work probe --duration-ms $EXP_MS" >/dev/null 2>&1 &
  LCP=$!
  wait $HOG
  echo "C2C-RESULT {\"experiment\":\"starvation\",\"cell\":\"$cell\",\"rep\":$4,\"result\":$(tail -n 1 $EXP_DIR/hog.out)}"
  samples_out "$cell" "$4" hog $EXP_DIR/samples.hog
  wait $LCP
  if [ "$3" = on ]; then
    sleep 1.5  # the exit events (or the rescan): the exited workloads' entries must be gone
    echo "C2C-RESULT {\"experiment\":\"stale\",\"cell\":\"$cell\",\"rep\":$4,\"result\":$(c2c-exp-watch --pin-root $EXP_PIN stale)}"
    exp_lifecycle "$cell" "$4"
  fi
}

# Restart recovery (D only: SIGTERM, start again on the same state, until the intent is APPLIED
# with the live probe's entry back) and rollback latency (policy delete -> the entry is gone: the
# scheduler serves the task on its default path).
exp_lifecycle() {  # exp_lifecycle <cell> <rep>
  sh -c "echo \$\$ > $LC_CG/cgroup.procs; exec c2c-exp-work probe --duration-ms 60000" >/dev/null 2>&1 &
  P=$!
  c2c-exp-watch --pin-root $EXP_PIN apply --tid $P --timeout-ms 120000 -- true >/dev/null
  restart=null
  if [ "$1" = D ]; then
    t0=$(uptime_ms)
    exp_daemon_stop
    if exp_daemon_start auto $EXP_DIR/daemon-restart.log; then
      t1=$(uptime_ms)
      ok=false; retry 300 intent_applied exp-lc && ok=true
      t2=$(uptime_ms)
      back=$(c2c-exp-watch --pin-root $EXP_PIN apply --tid $P --timeout-ms 120000 -- true)
      restart="{\"serving_ms\":$((t1 - t0)),\"intent_applied_ms\":$((t2 - t0)),\"applied\":$ok,\"entry\":$back}"
    else
      failed="$failed restart-$1-$2"
    fi
  fi
  kind=NodeSchedulingPolicy
  [ "$1" = D ] && kind=DRAExecutionPolicy
  rb=$(c2c-exp-watch --pin-root $EXP_PIN rollback --tid $P --timeout-ms 120000 -- claim2core delete $kind exp-lc)
  echo "$rb" | grep -q '"entry_gone_ms":[0-9]' || failed="$failed rollback-$1-$2"
  kill $P 2>/dev/null; wait $P 2>/dev/null
  echo "C2C-RESULT {\"experiment\":\"lifecycle\",\"cell\":\"$1\",\"rep\":$2,\"restart\":$restart,\"rollback\":$rb}"
}

# One more hackbench run, not timed for the goal, with the kernel's BPF run-time stats on
# (kernel.bpf_stats_enabled): the time the scheduler's struct_ops callbacks took and how often
# they ran, and for claim2core the daemon's task tracepoints beside them. A cost per callback
# that does not carry the emulated machine's drift the way a wall-clock time does.
hb_bpf_cost() {  # hb_bpf_cost <sched> <rep>
  echo 1 >/proc/sys/kernel/bpf_stats_enabled || return
  s0=$(c2c-vm-tool progs --struct-ops) c0=$(c2c-vm-tool progs)
  st0=$(c2c-vm-tool stats --pin-root $EXP_PIN 2>/dev/null || echo '{}')
  t=$(hackbench -g 4 -l 100 2>/dev/null | awk '/^Time:/{print $2}')
  s1=$(c2c-vm-tool progs --struct-ops) c1=$(c2c-vm-tool progs)
  st1=$(c2c-vm-tool stats --pin-root $EXP_PIN 2>/dev/null || echo '{}')
  echo 0 >/proc/sys/kernel/bpf_stats_enabled
  d() { jq -n --argjson a "$1" --argjson b "$2" "\$b.$3 - \$a.$3" 2>/dev/null || echo null; }
  # Per callback: {name: {ns, runs}} over the run.
  echo "C2C-RESULT {\"experiment\":\"hackbench_bpf\",\"sched\":\"$1\",\"rep\":$2,\"seconds\":${t:-null},\"struct_ops_ns\":$(d "$s0" "$s1" run_time_ns_total),\"struct_ops_runs\":$(d "$s0" "$s1" run_cnt_total),\"c2c_ns\":$(d "$c0" "$c1" run_time_ns_total),\"c2c_runs\":$(d "$c0" "$c1" run_cnt_total),\"programs\":$(prog_delta "$s0" "$s1"),\"starvation_rescues\":$(d "$st0" "$st1" starvation_rescues)}"
}

# hackbench with no policies: the default scheduler, claim2core (loaded by claim2cored, nothing
# applied) and scx_simple from the same kernel tree, interleaved in one boot.
hb_run() {  # hb_run <default|claim2core|scx_simple> <rep> <round>
  case $1 in
    # claim2core-nodiscovery: the same without the daemon's task discovery (no tracepoints, no
    # rescans): what the scheduler alone costs, beside what the product costs
    # (experiment.sh --hackbench-scheds).
    claim2core|claim2core-nodiscovery)
      rm -rf $EXP_DIR/state
      discovery=events
      [ $1 = claim2core-nodiscovery ] && discovery=off
      exp_daemon_start auto $EXP_DIR/daemon-hb.log $discovery || { failed="$failed hb-daemon"; return; }
      exp_scheduler_up $1-load $EXP_DIR/daemon-hb.log 'C2C-NOTE daemon: ' || return ;;
    scx_simple)
      [ -x /c2c/scx_simple ] || return
      scx_simple >/tmp/scx_simple.out 2>&1 &
      SCX=$!
      wait_state enabled 150 || { failed="$failed scx_simple-load"; kill $SCX; wait $SCX; return; } ;;
  esac
  # One run first, not timed, under every scheduler alike: the first run after claim2cored came
  # up was the slowest of its three in 6 of 9 series (three runs of this script, 2026-12-03;
  # scx_simple's in 2 of 9): the daemon's start-up work overlapped it.
  hackbench -g 4 -l 100 >/dev/null 2>&1
  k=1
  while [ $k -le "$HB_REPEAT" ]; do
    t=$(hackbench -g 4 -l 100 2>/dev/null | awk '/^Time:/{print $2}')
    [ -n "$t" ] || { failed="$failed hackbench-$1"; t=0; }
    echo "C2C-RESULT {\"experiment\":\"hackbench\",\"sched\":\"$1\",\"rep\":$2,\"round\":$3,\"run\":$k,\"seconds\":$t,\"scheduler_state\":\"$(cat /sys/kernel/sched_ext/state)\"}"
    k=$((k + 1))
  done
  # The callbacks' cost once a run (the first round): it needs no pairing.
  [ "$1" = default ] || [ "$3" != 1 ] || hb_bpf_cost $1 $2
  case $1 in
    claim2core|claim2core-nodiscovery) exp_daemon_stop ;;
    scx_simple) kill -INT $SCX; wait $SCX; wait_state disabled 100 ;;
  esac
}

reversed() {  # reversed <words...>: the words in the opposite order
  out=""
  for w in "$@"; do out="$w $out"; done
  echo $out
}

run_experiment() {
  mkdir -p $EXP_DIR
  set -- $EXP_CELLS; ncells=$#
  set -- $EXP_WORKLOADS; EXP_STEPS=$#
  # The preemption model the kernel booted with (PREEMPT_DYNAMIC prints it; experiment.sh --preempt).
  preempt_model=$(dmesg | sed -n 's/.*Dynamic Preempt: \([a-z]*\).*/\1/p' | tail -n 1)
  # How idle CPUs wait: idle=poll on the command line, else they halt (experiment.sh --guest-idle).
  idle_mode=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^idle=//p' | tail -n 1)
  echo "C2C-RESULT {\"experiment\":\"plan\",\"runs\":$EXP_RUNS,\"cells\":$ncells,\"workloads\":$EXP_STEPS,\"ms\":$EXP_MS,\"hackbench\":$EXP_HB,\"preempt\":\"${preempt_model:-unknown}\",\"idle\":\"${idle_mode:-halt}\"}"
  exp_topology
  exp_cgroups
  if echo " $EXP_WORKLOADS " | grep -q " upf "; then
    exp_network || { echo "C2C-NOTE network namespaces could not be set up; no UPF workload"; failed="$failed network"
                     EXP_WORKLOADS=$(echo " $EXP_WORKLOADS " | sed 's/ upf / /'); }
  fi
  rep=1
  # Interleaved, so that drift in the (emulated) machine spreads over every cell, and in the
  # opposite order every other run (A B C D, then D C B A; the hackbench series likewise), so
  # that a drift during a run (the host getting busier or quieter over minutes) does not always
  # favour the cell or scheduler that runs first.
  while [ $rep -le "$EXP_RUNS" ]; do
    cells=$EXP_CELLS
    scheds=$(echo "${EXP_HB_SCHEDS:-default,claim2core,scx_simple}" | tr , ' ')
    if [ $((rep % 2)) -eq 0 ]; then
      cells=$(reversed $cells)
      scheds=$(reversed $scheds)
    fi
    for cell in $cells; do
      case $cell in
        A) exp_run A off off $rep ;;
        B) exp_run B on off $rep ;;
        C) exp_run C off on $rep ;;
        D) exp_run D on on $rep ;;
      esac
    done
    if [ "$EXP_HB" = 1 ]; then
      round=1
      while [ $round -le "$EXP_HB_ROUNDS" ]; do
        for s in $scheds; do hb_run $s $rep $round; done
        scheds=$(reversed $scheds)
        round=$((round + 1))
      done
    fi
    rep=$((rep + 1))
  done
  # The run-time oracle (c2c_stats.oracle_*, on the daemon's pins) must have counted nothing.
  st=$(c2c-vm-tool stats --pin-root $EXP_PIN 2>/dev/null)
  n=$(echo "$st" | jq '(.oracle_cpu_outside // 0) + (.oracle_stale_identity // 0) + (.oracle_past_lease // 0)' 2>/dev/null || echo -1)
  echo "C2C-RESULT {\"experiment\":\"oracle\",\"violations\":$n,\"pass\":$([ "$n" = 0 ] && echo true || echo false)}"
  [ "$n" = 0 ] || failed="$failed oracle($n)"
}

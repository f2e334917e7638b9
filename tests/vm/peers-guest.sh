# The sched_ext peers as guest configurations (issue 43 item 5), sourced by vllm-guest.sh (and
# experiment-guest.sh): scx-lavd and scx-bpfland run /c2c/scx_lavd and /c2c/scx_bpfland, built by
# tools/scx-peers/build.sh and packed only when asked for (run-scenarios.sh --with-peers, or a
# c2c.vllm_configs naming them). A peer configuration measures only while the peer is the loaded
# sched_ext scheduler: /sys/kernel/sched_ext/root/ops names it (its ops name, which newer scx
# builds suffix with their version) and its process still runs; else the configuration fails.
# Needs the helpers of guest-init.sh (wait_state).

# peer_ops <config>: the ops name prefix the peer's BPF side registers.
peer_ops() {
  case $1 in
    scx-lavd) echo lavd ;;
    scx-bpfland) echo bpfland ;;
    *) return 1 ;;
  esac
}

# peer_loaded <config>: the peer started by peer_start is the enabled sched_ext scheduler.
peer_loaded() {
  p_ops=$(peer_ops "$1") || return 1
  [ -n "${PEER_PID:-}" ] && kill -0 "$PEER_PID" 2>/dev/null &&
    [ "$(cat /sys/kernel/sched_ext/state 2>/dev/null)" = enabled ] &&
    case $(cat /sys/kernel/sched_ext/root/ops 2>/dev/null) in "$p_ops"|"$p_ops"_*) true ;; *) false ;; esac
}

# peer_start <config> <log file>: starts the peer with its defaults and waits up to 30 s for it to be
# loaded. Returns 1 (peer stopped again, its log on the console) when it is not.
peer_start() {
  p_bin=/c2c/$(echo "$1" | tr - _)
  PEER_PID=""
  if [ ! -x "$p_bin" ]; then
    echo "C2C-NOTE peer $1: $p_bin missing from the initramfs (run-scenarios.sh --with-peers)"
    return 1
  fi
  # scx_utils looks for the energy model under debugfs and panics when debugfs is not mounted
  # (scx_lavd 1.0.19: "No debugfs mount found"); the guest kernel has it, unmounted.
  grep -q " debugfs " /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
  # c2c.peer_args=<options, commas for spaces> (e.g. -v: libbpf's own messages) goes to every peer.
  p_args=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^c2c\.peer_args=//p' | tr , ' ')
  "$p_bin" $p_args >"$2" 2>&1 &
  PEER_PID=$!
  p_i=0
  while ! peer_loaded "$1" && [ $p_i -lt 300 ]; do sleep 0.1; p_i=$((p_i + 1)); done
  peer_loaded "$1" && return 0
  echo "C2C-NOTE peer $1: not loaded after 30 s (state $(cat /sys/kernel/sched_ext/state), ops '$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)')"
  sed "s/^/C2C-PEER-LOG $1 /" "$2" | tail -n 40
  peer_stop
  return 1
}

# peer_stop: SIGINT (the peers' clean exit: they detach their ops) and wait for EEVDF again.
peer_stop() {
  [ -n "${PEER_PID:-}" ] || return 0
  kill -INT "$PEER_PID" 2>/dev/null
  wait "$PEER_PID" 2>/dev/null
  PEER_PID=""
  wait_state disabled 100
}

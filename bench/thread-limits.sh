# Sourced by bench/thread-burst and bench/daemon-scale: room for MAX threads on top of the host's.
# 100k threads need more tids and mappings than a default host has: kernel.pid_max (>= 262144),
# kernel.threads-max and vm.max_map_count (two mappings per thread stack) are raised for the run
# when they are lower, and put back on exit (the trap).
restore=""
raise() {  # sysctl file, wanted minimum
  cur=$(cat "$1")
  if [ "$cur" -lt "$2" ]; then
    echo "$2" > "$1"
    restore="$restore $1=$cur"
    echo "raised $1 from $cur to $2 for this run"
  fi
}
put_back() {
  for kv in $restore; do echo "${kv#*=}" > "${kv%%=*}"; done
}
raise_thread_limits() {  # MAX threads
  trap put_back EXIT INT TERM
  if [ "$1" -gt 20000 ]; then
    raise /proc/sys/kernel/pid_max 262144
    raise /proc/sys/kernel/threads-max $(($1 * 2 + 50000))
    raise /proc/sys/vm/max_map_count $(($1 * 3 + 65530))
  fi
}

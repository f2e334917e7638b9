# Part `host`: task discovery speed (BPF iterator vs procfs walk vs ps) and event latency.
# Run as root: build-<dir>/bench/host_discovery_bench [--threads N] [--samples N]
if(C2C_BUILD_BENCH AND TARGET c2c_host)
  add_executable(host_discovery_bench ${CMAKE_CURRENT_LIST_DIR}/host_discovery_bench.cpp)
  target_link_libraries(host_discovery_bench PRIVATE c2c_host)
  c2c_warnings(host_discovery_bench)
  if("bpf" IN_LIST C2C_SELECTED_PARTS)
    add_dependencies(host_discovery_bench c2c_bpf_task_iter c2c_bpf_task_events)
  endif()
endif()

# Issue 13: N threads starting at once -> every matching entry in claim2cored's map (<= 1 s after
# the burst), beside `ps -eLf` and the load average. Run bench/thread-burst (10k and 100k), or
# build-<dir>/bench/host_burst_bench <claim2cored> [--threads N] [--buffer BYTES].
if(C2C_BUILD_BENCH AND TARGET claim2cored)
  add_executable(host_burst_bench ${CMAKE_CURRENT_LIST_DIR}/host_burst_bench.cpp)
  target_link_libraries(host_burst_bench PRIVATE c2c_api c2c_mirror)
  add_dependencies(host_burst_bench claim2cored)
  c2c_warnings(host_burst_bench)
endif()
# Smoke (< 5 s): the script and the bench end to end with 200 threads (every entry must arrive,
# within 60 s; the figure itself is not judged here: no timed tests).
if(C2C_BUILD_BENCH AND TARGET host_burst_bench)
  add_test(NAME bench_thread_burst_smoke COMMAND ${CMAKE_CURRENT_LIST_DIR}/thread-burst --build ${CMAKE_BINARY_DIR} --quick)
  set_tests_properties(bench_thread_burst_smoke PROPERTIES LABELS bench TIMEOUT 60
    PASS_REGULAR_EXPRESSION "every matching entry in the map|skipped: needs root")
endif()

# Part `daemon`: claim2cored end-to-end latencies (RPC -> pinned map entry for policies matching
# 1 and 1,000 threads; a newly named thread -> its entry), p50/p99 printed side by side with the
# goals. Needs root and bpffs. Run: build-<dir>/bench/daemon_latency_bench build-<dir>/src/daemon/claim2cored [iterations]
# One bench binary that drives a real claim2cored through the API and reads the pinned maps.
function(c2c_daemon_bench name)
  add_executable(${name} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${name}.cpp)
  target_link_libraries(${name} PRIVATE c2c_api c2c_mirror)
  add_dependencies(${name} claim2cored)
  c2c_warnings(${name})
endfunction()
if(TARGET claim2cored)
  c2c_daemon_bench(daemon_latency_bench)
endif()
# RPC -> map at 1 and 16 concurrent clients, several claim2cored binaries side by side (issue #13):
#   build/bench/daemon_rpc_latency_bench [--iterations N] build/src/daemon/claim2cored [<old claim2cored>]
if(TARGET claim2cored)
  c2c_daemon_bench(daemon_rpc_latency_bench)
  # Runs end to end (a few seconds; no figure is judged): exit 1 when a row has no sample, which
  # is what it printed as "met" while every call was counted as failed (the reply says SENT now).
  add_test(NAME bench_rpc_latency_smoke
           COMMAND daemon_rpc_latency_bench --iterations 3 $<TARGET_FILE:claim2cored>)
  set_tests_properties(bench_rpc_latency_smoke PROPERTIES LABELS bench TIMEOUT 60)
endif()
# Issue 13's daemon rows at scale: N live matching tasks and entries (1k, 10k, 100k), new-thread ->
# map p50/p99, the daemon's CPU per task event, its RSS per task/entry and after the tasks exit,
# each beside the 1k figure with the load average. Run bench/daemon-scale (raises pid_max etc. for
# 100k), or build/bench/daemon_scale_bench <claim2cored> [--tasks 1000,10000] [--samples S] [--churn K].
if(TARGET claim2cored)
  c2c_daemon_bench(daemon_scale_bench)
  # Its metrics scrape (the daemon's full passes in the churn window): Debian's cpp-httplib.
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(C2C_BENCH_HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
  target_link_libraries(daemon_scale_bench PRIVATE PkgConfig::C2C_BENCH_HTTPLIB)
  # End to end at a tiny N (a few seconds; no figure is judged): every step must complete (tasks
  # seen, entries in, the churn window's marker, tasks and entries gone after the exit).
  add_test(NAME bench_daemon_scale_smoke
           COMMAND daemon_scale_bench $<TARGET_FILE:claim2cored> --tasks 40 --samples 5 --churn 30 --quick)
  set_tests_properties(bench_daemon_scale_smoke PROPERTIES LABELS bench TIMEOUT 60
    PASS_REGULAR_EXPRESSION "RSS held after exit|skipped: needs root")
endif()
# A fork storm against the daemon's task-event reader, task_event_poll_interval 0 against the
# default (spec/daemon.md, "Storms"). Run bench/task-event-storm (1k and 10k processes); the smoke
# runs 50 once each, end to end (the ratio line must come out; no figure is judged).
if(TARGET claim2cored)
  add_test(NAME bench_task_event_storm_smoke
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/task-event-storm --build ${CMAKE_BINARY_DIR} --reps 1 50)
  set_tests_properties(bench_task_event_storm_smoke PROPERTIES LABELS bench TIMEOUT 60 RUN_SERIAL TRUE
    PASS_REGULAR_EXPRESSION "\\(1ms / 0\\)|skipped: needs root")
endif()

# corebench: Google Benchmark figures for the pure core (scripts/bench-core runs them in Release).
# Guarded: a build whose C2C_PARTS leaves out src/core simply has no core benchmarks.
if(TARGET c2c_core AND TARGET c2c_trace)
  find_package(benchmark REQUIRED)
  add_executable(bench_core
    ${CMAKE_CURRENT_LIST_DIR}/core_world.cpp
    ${CMAKE_CURRENT_LIST_DIR}/core_events_bench.cpp
    ${CMAKE_CURRENT_LIST_DIR}/core_policy_bench.cpp
    ${CMAKE_CURRENT_LIST_DIR}/core_memory_bench.cpp
    ${CMAKE_CURRENT_LIST_DIR}/core_plan_check_bench.cpp
    ${CMAKE_CURRENT_LIST_DIR}/core_lease_bench.cpp
    ${CMAKE_CURRENT_LIST_DIR}/core_replay_bench.cpp)
  target_link_libraries(bench_core PRIVATE c2c_core c2c_trace benchmark::benchmark benchmark::benchmark_main)
  c2c_warnings(bench_core)

  # Counted, not timed: instructions and cache misses per task event under callgrind
  # (scripts/bench-core callgrind). callgrind.h's macros do nothing outside valgrind.
  add_executable(core_event_profile ${CMAKE_CURRENT_LIST_DIR}/core_world.cpp ${CMAKE_CURRENT_LIST_DIR}/core_event_profile.cpp)
  target_link_libraries(core_event_profile PRIVATE c2c_core c2c_trace)
  c2c_warnings(core_event_profile)

  # Smoke run in the default test suite: not a timing (no figure is checked), it fails when the
  # synthetic node falls out of step with the core (a benchmark reporting an error), so the
  # benchmarks do not rot silently. 1k tasks only: well under a second.
  add_test(NAME bench_core_smoke
    COMMAND bench_core --benchmark_filter=BM_CoreTaskEvents/1000/ --benchmark_min_time=0.01)
  set_tests_properties(bench_core_smoke PROPERTIES LABELS bench FAIL_REGULAR_EXPRESSION "ERROR OCCURRED" TIMEOUT 60)
endif()

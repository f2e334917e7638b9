# corebench: Google Benchmark figures for the pure core (scripts/bench-core runs them in Release).
find_package(benchmark REQUIRED)
add_executable(bench_core
  ${CMAKE_CURRENT_LIST_DIR}/core_world.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_events_bench.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_policy_bench.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_memory_bench.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_plan_check_bench.cpp)
target_link_libraries(bench_core PRIVATE c2c_core benchmark::benchmark benchmark::benchmark_main)
c2c_warnings(bench_core)

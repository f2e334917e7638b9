# k8s part: decoding and binding figures (Google Benchmark). Run: build-*/bench/bench_k8s
if(TARGET c2c_k8s)
  find_package(benchmark REQUIRED)
  add_executable(bench_k8s ${CMAKE_CURRENT_LIST_DIR}/k8s_bench.cpp)
  target_link_libraries(bench_k8s PRIVATE c2c_k8s benchmark::benchmark benchmark::benchmark_main)
  c2c_warnings(bench_k8s)
endif()

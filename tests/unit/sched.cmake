# Unit tests of the sched part's pure helpers (statistics, exit records). No kernel needed.
if(TARGET c2c_sched)
  add_executable(sched_unit_tests sched_stats_test.cpp sched_exit_info_test.cpp sched_enforcing_test.cpp sched_tunables_test.cpp)
  target_link_libraries(sched_unit_tests PRIVATE c2c_sched c2c_bpf_path GTest::gtest_main)
  c2c_warnings(sched_unit_tests)
  gtest_discover_tests(sched_unit_tests PROPERTIES LABELS "unit;sched")
endif()

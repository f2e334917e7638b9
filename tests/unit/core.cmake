# Unit tests of the pure core and the trace format.
add_executable(core_unit_tests
  ${CMAKE_CURRENT_LIST_DIR}/core_invariant_scenarios_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_restart_bounds_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_process_title_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_names_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_task_role_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_cpuset_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_incremental_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_derive_memo_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_tid_set_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_lease_queue_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_intern_pool_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_task_record_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_memory_return_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_node_labels_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_regex_compiles_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/codec_node_selectors_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/codec_trace_events_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/codec_bounded_yaml_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/codec_controller_spec_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_controller_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_controller_entries_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/core_boost_inherit_test.cpp)
target_link_libraries(core_unit_tests PRIVATE c2c_trace c2c_test_source_dir GTest::gtest_main)
target_include_directories(core_unit_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR})
c2c_warnings(core_unit_tests)
gtest_discover_tests(core_unit_tests TEST_PREFIX "core." DISCOVERY_TIMEOUT 60)

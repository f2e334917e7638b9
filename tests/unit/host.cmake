# Part `host`: parsers, pod identity, topology on a fake sysfs tree, procfs walker, record decoding.
if(TARGET c2c_host)
  add_executable(host_unit_tests
    ${CMAKE_CURRENT_LIST_DIR}/host_proc_stat_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_cgroup_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_topology_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_procfs_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_task_record_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_task_cgroup_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_bpf_object_path_test.cpp)
  target_link_libraries(host_unit_tests PRIVATE c2c_host GTest::gtest_main)
  c2c_warnings(host_unit_tests)
  gtest_discover_tests(host_unit_tests TEST_PREFIX "host." DISCOVERY_TIMEOUT 30)
endif()

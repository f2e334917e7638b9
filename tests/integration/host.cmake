# Part `host`: the three task discovery methods against `ps` on real threads, renames, TID reuse.
# Needs root (BPF); skips with a reason otherwise.
if(TARGET c2c_host)
  add_executable(host_discovery_integration ${CMAKE_CURRENT_LIST_DIR}/host_discovery_test.cpp)
  target_link_libraries(host_discovery_integration PRIVATE c2c_host GTest::gtest_main)
  c2c_warnings(host_discovery_integration)
  if("bpf" IN_LIST C2C_PARTS)
    add_dependencies(host_discovery_integration c2c_bpf_task_iter c2c_bpf_task_events)
  endif()
  gtest_discover_tests(host_discovery_integration TEST_PREFIX "host.integration." DISCOVERY_TIMEOUT 30
                       PROPERTIES TIMEOUT 60)
endif()

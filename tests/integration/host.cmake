# Part `host`: the three task discovery methods against `ps` on real threads, renames, TID reuse.
# Needs root (BPF); skips with a reason otherwise.
if(TARGET c2c_host)
  add_executable(host_discovery_integration ${CMAKE_CURRENT_LIST_DIR}/host_discovery_test.cpp)
  target_link_libraries(host_discovery_integration PRIVATE c2c_host GTest::gtest_main)
  c2c_warnings(host_discovery_integration)
  if("bpf" IN_LIST C2C_SELECTED_PARTS)
    add_dependencies(host_discovery_integration c2c_bpf_task_iter c2c_bpf_task_events)
  endif()
  gtest_discover_tests(host_discovery_integration TEST_PREFIX "host.integration." DISCOVERY_TIMEOUT 30
                       PROPERTIES TIMEOUT 60)
endif()

# The command-line tool end to end: a /proc/<pid>/comm write arrives as one rename event.
if(TARGET c2c-host-tool)
  add_test(NAME host.integration.tool_events_rename
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/host_tool_events.sh $<TARGET_FILE:c2c-host-tool>)
  set_tests_properties(host.integration.tool_events_rename PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
endif()

# Waker -> wakee edges and run counts (issue 46 item 4): a condvar ping-pong and a spinner.
if(TARGET c2c_host)
  add_executable(host_wakeup_edges_integration ${CMAKE_CURRENT_LIST_DIR}/host_wakeup_edges_test.cpp)
  target_link_libraries(host_wakeup_edges_integration PRIVATE c2c_host GTest::gtest_main)
  c2c_warnings(host_wakeup_edges_integration)
  if("bpf" IN_LIST C2C_SELECTED_PARTS)
    add_dependencies(host_wakeup_edges_integration c2c_bpf_wakeup_edges)
  endif()
  gtest_discover_tests(host_wakeup_edges_integration TEST_PREFIX "host.integration." DISCOVERY_TIMEOUT 30
                       PROPERTIES TIMEOUT 60)
endif()

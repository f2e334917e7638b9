# Part `host`: parsers, pod identity, topology on a fake sysfs tree, procfs walker, record decoding.
if(TARGET c2c_host)
  add_executable(host_unit_tests
    ${CMAKE_CURRENT_LIST_DIR}/host_proc_stat_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_cgroup_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_topology_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_procfs_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_task_record_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_task_cgroup_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_cgroup_resolver_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_events_ringbuf_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_bpf_object_path_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/host_process_title_test.cpp)
  target_link_libraries(host_unit_tests PRIVATE c2c_host GTest::gtest_main)
  c2c_warnings(host_unit_tests)
  gtest_discover_tests(host_unit_tests TEST_PREFIX "host." DISCOVERY_TIMEOUT 30)
endif()

# The controller's signal parsers and window arithmetic (issue 46): their own small binary.
if(TARGET c2c_host_signals)
  add_executable(host_signal_tests ${CMAKE_CURRENT_LIST_DIR}/host_run_signals_test.cpp)
  target_link_libraries(host_signal_tests PRIVATE c2c_host_signals GTest::gtest_main)
  c2c_warnings(host_signal_tests)
  gtest_discover_tests(host_signal_tests TEST_PREFIX "host." DISCOVERY_TIMEOUT 30)
endif()

# The command-line tool on a fixture path (no privileges needed).
if(TARGET c2c-host-tool)
  add_test(NAME host.tool.pod_cgroup
           COMMAND c2c-host-tool pod-cgroup
                   /kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/kubelet-kubepods-burstable-podc4dadf20_392a_474d_a47b_ab82080c8bd7.slice/crio-413715dc061efe71c16ef989f2f2ff5cf999a7dc905bb7078eda82cbb38210ec.scope)
  set_tests_properties(host.tool.pod_cgroup PROPERTIES PASS_REGULAR_EXPRESSION
    "\"container_id\":\"413715dc061efe71c16ef989f2f2ff5cf999a7dc905bb7078eda82cbb38210ec\".*\"pod_uid\":\"c4dadf20-392a-474d-a47b-ab82080c8bd7\".*\"runtime\":\"cri-o\"")
  add_test(NAME host.tool.pod_cgroup_rejects COMMAND c2c-host-tool pod-cgroup /user.slice/user-0.slice)
  set_tests_properties(host.tool.pod_cgroup_rejects PROPERTIES WILL_FAIL TRUE)
endif()

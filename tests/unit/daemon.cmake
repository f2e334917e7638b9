# Part `daemon`: proto <-> model conversions and the daemon's pure pieces (durable state, intents,
# config). tests/unit/daemon_*_test.cpp
if(TARGET c2c_api_model)
  add_executable(daemon_convert_tests ${CMAKE_CURRENT_LIST_DIR}/daemon_convert_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/convert_classify_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/daemon_node_api_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/api_field_path_test.cpp)
  target_link_libraries(daemon_convert_tests PRIVATE c2c_api_model GTest::gtest_main)
  c2c_warnings(daemon_convert_tests)
  gtest_discover_tests(daemon_convert_tests TEST_PREFIX "daemon." DISCOVERY_TIMEOUT 30)
endif()
if(TARGET c2c_daemon)
  add_executable(daemon_state_tests ${CMAKE_CURRENT_LIST_DIR}/daemon_state_test.cpp
                                    ${CMAKE_CURRENT_LIST_DIR}/daemon_role_proposal_view_test.cpp
                                    ${CMAKE_CURRENT_LIST_DIR}/daemon_exclusive_test.cpp
                                    ${CMAKE_CURRENT_LIST_DIR}/daemon_metrics_test.cpp
                                    ${CMAKE_CURRENT_LIST_DIR}/daemon_event_log_test.cpp
                                    ${CMAKE_CURRENT_LIST_DIR}/daemon_reconcile_test.cpp
                                    ${CMAKE_CURRENT_LIST_DIR}/daemon_state_log_test.cpp
                                    ${CMAKE_CURRENT_LIST_DIR}/daemon_command_queue_test.cpp
                                    ${CMAKE_CURRENT_LIST_DIR}/daemon_task_roles_test.cpp
                                    ${CMAKE_CURRENT_LIST_DIR}/daemon_role_limits_test.cpp
                                    ${CMAKE_CURRENT_LIST_DIR}/daemon_node_labels_test.cpp)
  target_link_libraries(daemon_state_tests PRIVATE c2c_daemon GTest::gtest_main)
  target_link_libraries(daemon_state_tests PRIVATE c2c_test_source_dir)
  c2c_warnings(daemon_state_tests)
  gtest_discover_tests(daemon_state_tests TEST_PREFIX "daemon." DISCOVERY_TIMEOUT 30)
  add_executable(daemon_host_feed_tests ${CMAKE_CURRENT_LIST_DIR}/daemon_host_feed_test.cpp)
  target_link_libraries(daemon_host_feed_tests PRIVATE c2c_daemon GTest::gtest_main)
  c2c_warnings(daemon_host_feed_tests)
  gtest_discover_tests(daemon_host_feed_tests TEST_PREFIX "daemon." DISCOVERY_TIMEOUT 30)
  # The controllers' windows and decisions (src/daemon/controller, issue 46).
  add_executable(daemon_controller_tests ${CMAKE_CURRENT_LIST_DIR}/daemon_controller_test.cpp
                                         ${CMAKE_CURRENT_LIST_DIR}/daemon_activity_windows_test.cpp)
  target_link_libraries(daemon_controller_tests PRIVATE c2c_daemon GTest::gtest_main)
  c2c_warnings(daemon_controller_tests)
  gtest_discover_tests(daemon_controller_tests TEST_PREFIX "daemon." DISCOVERY_TIMEOUT 30)
endif()
# The daemon's layer rules (spec/daemon.md, "Layers"): the engine includes no protobuf/gRPC header
# (transitively), the service no core internals and no direct use of the core, durable state or
# intents; the seeded run shows the check catches one violation of each rule.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME daemon.layering COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/daemon_layering_check.py
                                        ${PROJECT_SOURCE_DIR})
  add_test(NAME daemon.layering_seeded
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/daemon_layering_check.py --seeded ${PROJECT_SOURCE_DIR})
  set_tests_properties(daemon.layering daemon.layering_seeded PROPERTIES LABELS unit TIMEOUT 60)
endif()

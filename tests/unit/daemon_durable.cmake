# Part `daemon`, its durable layer (issue 45): the state file, the state log, their loader, the
# generation guard, compiled from their sources against core + codec + mirror (no gRPC), so that
# tests/mutants/mutate.py daemon_durable seeds bugs in them cheaply. The crash-consistency test (every
# state a power loss could leave, through host/file_ops.hpp) and the generation guard's bound; the
# node-state model and the reconciler over the mirror's fake map.
if(TARGET c2c_mirror AND TARGET c2c_codec)
  find_package(spdlog REQUIRED)
  find_package(ZLIB REQUIRED)
  find_package(rapidcheck REQUIRED CONFIG)
  add_executable(daemon_durable_tests ${CMAKE_CURRENT_LIST_DIR}/daemon_crash_consistency_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/daemon_generation_guard_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/daemon_node_state_model_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/daemon_state_file_bounds_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/daemon_reconciler_test.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/durable/durable_state.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/durable/durable_load.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/durable/state_log.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/durable/generation_guard.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/node_state/intents.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/node_state/policy_facts.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/node_state/intent_reasons.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/node_state/intent_settling.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/reconciler/reconciler.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/reconciler/retry_queue.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/reconciler/sliced_read_back.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/reconciler/confirm_pass.cpp)
  target_include_directories(daemon_durable_tests PRIVATE ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(daemon_durable_tests PRIVATE c2c_mirror c2c_codec spdlog::spdlog ZLIB::ZLIB rapidcheck rapidcheck_gtest
                                               GTest::gtest_main)
  c2c_warnings(daemon_durable_tests)
  gtest_discover_tests(daemon_durable_tests TEST_PREFIX "daemon." DISCOVERY_TIMEOUT 30 PROPERTIES TIMEOUT 60)
endif()

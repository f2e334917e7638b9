# Part `daemon`, its intents' pure pieces (states, confirmed counts, reasons: spec/daemon.md,
# "Intents"; the short read-back's comparison, the heap trim's timing, when a batch skips its undo copy, when the task-event ring buffer is read, the daemon's SCHED_FIFO), compiled from their sources against the core alone, so that
# tests/mutants/mutate.py mirror (which rebuilds only this test binary) can seed bugs in them cheaply.
if(TARGET c2c_core)
  add_executable(daemon_intents_tests ${CMAKE_CURRENT_LIST_DIR}/daemon_intents_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/daemon_confirm_pass_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/daemon_batch_reservation_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/daemon_lease_hold_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/daemon_task_event_pacing_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/daemon_realtime_priority_test.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/daemon_realtime_budget_test.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/loop/realtime_priority.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/loop/realtime_budget.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/reconciler/confirm_pass.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/reconciler/sliced_read_back.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/node_state/intents.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/node_state/policy_facts.cpp
                                      ${PROJECT_SOURCE_DIR}/src/daemon/node_state/intent_reasons.cpp)
  target_include_directories(daemon_intents_tests PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(daemon_intents_tests PRIVATE c2c_core GTest::gtest_main)
  c2c_warnings(daemon_intents_tests)
  gtest_discover_tests(daemon_intents_tests TEST_PREFIX "daemon." DISCOVERY_TIMEOUT 30)
endif()

# scripts/test-times: the per-test top 10 that scripts/test prints after the default run (issue 44:
# CI shows where the 600 s of tests go), read from a ctest log; a missing or empty log is an error.
add_test(NAME scripts.test_times COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_times_test.py
                                         ${PROJECT_SOURCE_DIR})
set_tests_properties(scripts.test_times PROPERTIES LABELS unit TIMEOUT 60)
# scripts/test-schedule: its model of ctest's -j schedule (RUN_SERIAL, RESOURCE_LOCK, fixtures, COST)
# on synthetic tests, so that the makespan it prints for the suite can be trusted (issue 44 item 7).
add_test(NAME scripts.test_schedule COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_schedule_test.py
                                            ${PROJECT_SOURCE_DIR})
set_tests_properties(scripts.test_schedule PROPERTIES LABELS unit TIMEOUT 60)

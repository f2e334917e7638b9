# scripts/test-times: the per-test top 10 that scripts/test prints after the default run (issue 44:
# CI shows where the 600 s of tests go), read from a ctest log; a missing or empty log is an error.
add_test(NAME scripts.test_times COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_times_test.py
                                         ${PROJECT_SOURCE_DIR})
set_tests_properties(scripts.test_times PROPERTIES LABELS unit TIMEOUT 60)

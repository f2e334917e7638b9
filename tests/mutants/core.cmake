# The kill matrix: every seeded bug in patches/ must be caught by at least one checker.
add_test(NAME mutants.kill_matrix COMMAND ${CMAKE_CURRENT_LIST_DIR}/run)
set_tests_properties(mutants.kill_matrix PROPERTIES TIMEOUT 1500 LABELS mutants)

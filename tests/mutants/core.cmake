# The kill matrix: every seeded bug in patches/ must be caught by at least one checker.
add_test(NAME mutants.kill_matrix COMMAND ${CMAKE_CURRENT_LIST_DIR}/run)
# Both seeded-bug runs build a copy of the tree: one at a time, or they starve each other.
set_tests_properties(mutants.kill_matrix PROPERTIES TIMEOUT 3000 LABELS mutants RESOURCE_LOCK c2c_tree_copy_build)

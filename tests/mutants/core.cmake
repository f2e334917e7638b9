# The kill matrix: every seeded bug in patches/ must be caught by at least one checker.
add_test(NAME mutants.kill_matrix COMMAND ${CMAKE_CURRENT_LIST_DIR}/run)
# Both seeded-bug runs build a copy of the tree: one at a time, or they starve each other.
# COST: the longest tests start first, so that the rest of the suite fills the other slot.
set_tests_properties(mutants.kill_matrix PROPERTIES TIMEOUT 3000 LABELS mutants RESOURCE_LOCK c2c_tree_copy_build
                                         COST 5000)
# The z3 column uses this build's checker (not whichever build*/ directory verify-z3 finds first).
if("model" IN_LIST C2C_SELECTED_PARTS)
  set_property(TEST mutants.kill_matrix PROPERTY ENVIRONMENT C2C_Z3_CHECK=${CMAKE_BINARY_DIR}/model/z3/c2c-z3-check)
endif()

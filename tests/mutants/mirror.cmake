# Part `mirror`: seeded bugs in src/mirror that the mirror's unit tests must catch (builds a
# temporary copy of core + mirror; a few minutes on 2 busy cores, hence the label).
add_test(NAME mutants.mirror COMMAND ${CMAKE_CURRENT_LIST_DIR}/mirror_run)
set_tests_properties(mutants.mirror PROPERTIES TIMEOUT 3000 LABELS mutants RESOURCE_LOCK c2c_tree_copy_build COST 4000)

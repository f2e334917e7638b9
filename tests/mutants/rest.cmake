# Part `rest` (label extended: ~10 min, left out of scripts/test's default run; scripts/test -L extended): seeded bugs in src/rest (body mapping, auth) that the rest unit tests must catch
# (builds a temporary copy of core + k8s + api + cli + rest; minutes on 2 busy cores).
add_test(NAME mutants.rest COMMAND ${CMAKE_CURRENT_LIST_DIR}/rest_run)
set_tests_properties(mutants.rest PROPERTIES TIMEOUT 3000 LABELS "mutants;extended" RESOURCE_LOCK c2c_tree_copy_build COST 3000)

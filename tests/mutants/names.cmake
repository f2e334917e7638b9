# Part `names` (label extended: a tree-copy build of core + codec + trace + k8s + api + cli, minutes
# on 2 busy cores): seeded bugs in issue 42's rules (names are bytes, echoed input, the proto's pod
# field paths, deletes while the generation lease is held) that the unit tests must catch (names.tsv).
add_test(NAME mutants.names COMMAND ${CMAKE_CURRENT_LIST_DIR}/names_run)
set_tests_properties(mutants.names PROPERTIES TIMEOUT 3000 LABELS "mutants;extended" RESOURCE_LOCK c2c_tree_copy_build COST 1500)

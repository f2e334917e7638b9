# Part `daemon durable` (label extended: a tree-copy build of core + codec + host + mirror and the
# daemon's durable sources, minutes on 2 busy cores): seeded bugs in the durable writes' order,
# the state log, the state file's bounds, the generation guard and the intents' facts that
# daemon_durable_tests must catch (daemon_durable.tsv, issue 45).
add_test(NAME mutants.daemon_durable COMMAND ${CMAKE_CURRENT_LIST_DIR}/daemon_durable_run)
set_tests_properties(mutants.daemon_durable PROPERTIES TIMEOUT 3000 LABELS "mutants;extended"
                     RESOURCE_LOCK c2c_tree_copy_build COST 1500)

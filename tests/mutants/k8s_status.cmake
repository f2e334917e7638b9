# Part `k8s status` (label extended: a tree-copy build of core + trace + k8s + api, minutes on 2
# busy cores): seeded bugs in the status writer's merge and the preview acknowledgement that
# k8s_feed_unit_tests must catch (k8s_status.tsv).
add_test(NAME mutants.k8s_status COMMAND ${CMAKE_CURRENT_LIST_DIR}/k8s_status_run)
set_tests_properties(mutants.k8s_status PROPERTIES TIMEOUT 3000 LABELS "mutants;extended" RESOURCE_LOCK c2c_tree_copy_build COST 1500)

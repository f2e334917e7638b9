# Part `mirror`: seeded bugs in src/mirror that the mirror's unit tests must catch, and in the
# policy maps' BPF program that the mirror's integration test must catch (builds a temporary copy
# of core + mirror; a few minutes on 2 busy cores, hence the label). tests/integration comes
# before tests/mutants in C2C_ALL_PARTS, so its target is known here.
if(TARGET mirror_integration_tests)
  add_test(NAME mutants.mirror COMMAND ${CMAKE_CURRENT_LIST_DIR}/mirror_run
    --integration-tests $<TARGET_FILE:mirror_integration_tests>)
  set_tests_properties(mutants.mirror PROPERTIES TIMEOUT 3000 LABELS mutants RESOURCE_LOCK c2c_tree_copy_build COST 4000)
endif()

# Part `rest` (label extended: ~10 min, left out of scripts/test's default run; scripts/test -L extended): seeded bugs in src/rest
# (body mapping, body limits, auth) that the rest unit tests must catch, and (with claim2cored and the fake vLLM of this
# build) connection limits and idempotent writes that tests/integration/rest_adversarial_test.py must catch (root, bpffs)
# (builds a temporary copy of core + k8s + api + cli + rest; minutes on 2 busy cores).
set(c2c_rest_mutant_args "")
if(TARGET claim2cored AND TARGET c2c-fake-vllm)
  set(c2c_rest_mutant_args --daemon $<TARGET_FILE:claim2cored> --fake $<TARGET_FILE:c2c-fake-vllm>)
endif()
add_test(NAME mutants.rest COMMAND ${CMAKE_CURRENT_LIST_DIR}/rest_run ${c2c_rest_mutant_args})
set_tests_properties(mutants.rest PROPERTIES TIMEOUT 3000 LABELS "mutants;extended" RESOURCE_LOCK c2c_tree_copy_build COST 3000)

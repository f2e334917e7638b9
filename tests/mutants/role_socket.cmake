# Part `role socket` (label extended: a tree-copy build of core + host + mirror + daemon and a run of
# the adversarial integration test per mutant the unit tests miss; minutes on 2 busy cores): seeded
# bugs in the role socket's rules (issue 42: limits, identity, ASCII roles, fair queueing, the
# exclusivity lock) that the tests must catch (role_socket.tsv).
if(TARGET claim2cored)
  set(c2c_role_bpf_args "")
  if("bpf" IN_LIST C2C_SELECTED_PARTS)
    set(c2c_role_bpf_args --bpf-dir ${CMAKE_BINARY_DIR}/bpf)
  endif()
  add_test(NAME mutants.role_socket COMMAND ${CMAKE_CURRENT_LIST_DIR}/role_socket_run ${c2c_role_bpf_args})
  set_tests_properties(mutants.role_socket PROPERTIES TIMEOUT 3000 LABELS "mutants;extended"
                       RESOURCE_LOCK c2c_tree_copy_build COST 1500)
endif()

# The kill matrix's "kernel" section: every seeded bug of kernel.tsv (bpf/c2c_guards.h) must be
# rejected by the Frama-C/WP proof and by the guards' unit tests (kernel_run; ~3 min on 2 busy
# cores). The guest column (the BPF build of each mutant in the qemu guest) is vm_scenarios'
# mutant-* results; `kernel_run --guest-results FILE` prints it in the same table.
# The whole-header proof of the unmutated header is proof.guards_wp's: its stamp (the hash of
# every input of the proof) stands for kernel_run's baseline proof instead of a second one.
set(c2c_kernel_run_args --checkers "proof unit")
if("tests/proof" IN_LIST C2C_SELECTED_PARTS)
  list(APPEND c2c_kernel_run_args --baseline-stamp ${CMAKE_BINARY_DIR}/tests/proof/guards_wp.stamp)
endif()
add_test(NAME mutants.kernel COMMAND ${CMAKE_CURRENT_LIST_DIR}/kernel_run ${c2c_kernel_run_args})
set_tests_properties(mutants.kernel PROPERTIES TIMEOUT 1200 LABELS "mutants;kernel" SKIP_RETURN_CODE 77 COST 3000
                                    RESOURCE_LOCK c2c_frama_c)  # not beside proof.guards_wp: timeouts
if("tests/proof" IN_LIST C2C_SELECTED_PARTS)
  set_property(TEST mutants.kernel PROPERTY FIXTURES_REQUIRED c2c_guards_proved)
endif()

# Part `kernel` (src/kernel, issue 44 item 2): the one layer that opens, pins, checks and closes BPF
# objects and maps. Its checks run against real maps pinned under a private directory of
# /sys/fs/bpf (root and bpffs; skipped, saying why, without them).
if(TARGET c2c_kernel AND TARGET c2c_bpf_path)
  add_executable(kernel_layer_tests kernel_layer_test.cpp)
  target_link_libraries(kernel_layer_tests PRIVATE c2c_kernel c2c_bpf_path GTest::gtest_main)
  c2c_warnings(kernel_layer_tests)
  if("bpf" IN_LIST C2C_SELECTED_PARTS)
    add_dependencies(kernel_layer_tests c2c_bpf_policy_maps)  # the BTF test's maps come from it
  endif()
  gtest_discover_tests(kernel_layer_tests TEST_PREFIX "kernel_layer." DISCOVERY_TIMEOUT 30
    PROPERTIES LABELS "unit" TIMEOUT 60)
endif()

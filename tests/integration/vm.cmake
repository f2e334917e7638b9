# Host-side integration tests of the sched loader (part: vm/sched). The host kernel has no
# sched_ext, so these cover the refusal paths against the real bpf() syscall and bpffs; the
# scheduler itself is exercised in the qemu guest (tests/vm, ctest label vm).
if(TARGET c2c_sched)
  add_executable(vm_sched_loader_test vm_sched_loader_test.cpp)
  target_link_libraries(vm_sched_loader_test PRIVATE c2c_sched GTest::gtest_main)
  c2c_warnings(vm_sched_loader_test)
  gtest_discover_tests(vm_sched_loader_test PROPERTIES LABELS "integration;sched")
endif()

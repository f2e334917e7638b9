# Unit tests of the scheduler's guards (bpf/c2c_guards.h), compiled as C++ on the host: the header
# is pure C with no BPF helper, so the same decisions the kernel runs are tested here. No part
# needed beyond the header itself.
add_executable(guards_unit_tests guards_test.cpp)
target_include_directories(guards_unit_tests PRIVATE ${PROJECT_SOURCE_DIR}/bpf)
target_link_libraries(guards_unit_tests PRIVATE GTest::gtest_main)
c2c_warnings(guards_unit_tests)
gtest_discover_tests(guards_unit_tests PROPERTIES LABELS unit)

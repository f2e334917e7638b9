# Part `mirror`: unit tests of the conversions, the applier (on an in-memory map with injected
# faults), the diff and the durable generation. No kernel needed.
# Only when src/mirror is part of this build (C2C_PARTS).
if(TARGET c2c_mirror)
  add_executable(mirror_unit_tests
    ${CMAKE_CURRENT_LIST_DIR}/mirror_policy_value_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/mirror_applier_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/mirror_diff_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/mirror_generation_test.cpp)
  target_link_libraries(mirror_unit_tests PRIVATE c2c_mirror GTest::gtest_main)
  c2c_warnings(mirror_unit_tests)
  gtest_discover_tests(mirror_unit_tests TEST_PREFIX "mirror." DISCOVERY_TIMEOUT 30)
endif()

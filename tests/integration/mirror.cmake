# Part `mirror`: the pinned maps on the real bpffs (skipped without root/bpffs), and the
# kill -9 crash test driving c2c-mirror-tool.
# Only when src/mirror is part of this build (C2C_PARTS).
if(TARGET c2c_mirror)
  add_executable(mirror_integration_tests
    ${CMAKE_CURRENT_LIST_DIR}/mirror_pinned_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/mirror_crash_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/mirror_core_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/mirror_test_env.hpp)
  target_link_libraries(mirror_integration_tests PRIVATE c2c_mirror GTest::gtest_main nlohmann_json::nlohmann_json)
  target_compile_definitions(mirror_integration_tests PRIVATE
    C2C_MIRROR_TOOL="$<TARGET_FILE:c2c-mirror-tool>")
  add_dependencies(mirror_integration_tests c2c-mirror-tool)
  c2c_warnings(mirror_integration_tests)
  gtest_discover_tests(mirror_integration_tests TEST_PREFIX "mirror." DISCOVERY_TIMEOUT 30
    PROPERTIES TIMEOUT 180 RUN_SERIAL TRUE)
endif()

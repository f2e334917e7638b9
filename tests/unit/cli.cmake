# cli part: manifests, bounded YAML, output formats and connection options (tests/unit/cli_*.cpp).
if(TARGET c2c_cli)
  add_executable(cli_unit_tests
    ${CMAKE_CURRENT_LIST_DIR}/cli_bounded_yaml_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cli_manifests_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cli_output_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cli_connection_test.cpp)
  target_link_libraries(cli_unit_tests PRIVATE c2c_cli GTest::gtest_main)
  target_compile_definitions(cli_unit_tests PRIVATE C2C_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  c2c_warnings(cli_unit_tests)
  gtest_discover_tests(cli_unit_tests TEST_PREFIX "cli." DISCOVERY_TIMEOUT 30)
endif()

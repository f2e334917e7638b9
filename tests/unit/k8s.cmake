# k8s part: decoding, bindings and the fixture table (tests/unit/k8s_*.cpp).
if(TARGET c2c_k8s)
  add_executable(k8s_unit_tests
    ${CMAKE_CURRENT_LIST_DIR}/k8s_decode_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/k8s_bindings_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/k8s_fixtures_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/k8s_config_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/k8s_cache_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/k8s_cli_test.cpp)
  # The fixtures live in the repository (tests/fixtures/dra, found through c2c::test::source_dir());
  # C2C_FIXTURES overrides at run time.
  target_link_libraries(k8s_unit_tests PRIVATE c2c_k8s c2c_test_source_dir GTest::gtest_main)
  c2c_warnings(k8s_unit_tests)
  gtest_discover_tests(k8s_unit_tests TEST_PREFIX "k8s." DISCOVERY_TIMEOUT 30)
endif()

# The feed into claim2cored (claim requests, policy CRDs, the sender, the status entries and the
# preview acknowledgement), without a daemon.
if(TARGET c2c_k8s_feed)
  add_executable(k8s_feed_unit_tests ${CMAKE_CURRENT_LIST_DIR}/k8s_feed_test.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/k8s_status_test.cpp)
  target_link_libraries(k8s_feed_unit_tests PRIVATE c2c_k8s_feed GTest::gtest_main)
  c2c_warnings(k8s_feed_unit_tests)
  gtest_discover_tests(k8s_feed_unit_tests TEST_PREFIX "k8s." DISCOVERY_TIMEOUT 30 PROPERTIES TIMEOUT 60)
endif()

# The status writer against a fake API server in the test process (cpp-httplib): 409s, timeouts
# and refusals N times in a row, each retried at the next pass (issue 45).
if(TARGET c2c_k8s_feed)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(C2C_TEST_HTTPLIB IMPORTED_TARGET cpp-httplib)
  if(C2C_TEST_HTTPLIB_FOUND)
    add_executable(k8s_status_writer_tests ${CMAKE_CURRENT_LIST_DIR}/k8s_status_writer_test.cpp)
    target_link_libraries(k8s_status_writer_tests PRIVATE c2c_k8s_feed PkgConfig::C2C_TEST_HTTPLIB GTest::gtest_main)
    c2c_warnings(k8s_status_writer_tests)
    gtest_discover_tests(k8s_status_writer_tests TEST_PREFIX "k8s." DISCOVERY_TIMEOUT 30 PROPERTIES TIMEOUT 60)
  endif()
endif()

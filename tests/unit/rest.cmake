# rest part: the REST body <-> NodeSchedulingPolicy mapping, the request decoder (body limits,
# duplicate keys, UTF-8, routes), envelopes and auth (tests/unit/rest_*.cpp).
if(TARGET c2c_rest)
  add_executable(rest_unit_tests
    ${CMAKE_CURRENT_LIST_DIR}/rest_policy_body_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/rest_envelope_auth_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/rest_request_decoder_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/rest_cors_gui_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/rest_login_test.cpp)
  # The login tests forge tokens with libjwt and cheap hashes with libsodium directly.
  target_link_libraries(rest_unit_tests PRIVATE c2c_rest GTest::gtest_main PkgConfig::SODIUM PkgConfig::LIBJWT)
  c2c_warnings(rest_unit_tests)
  gtest_discover_tests(rest_unit_tests TEST_PREFIX "rest." DISCOVERY_TIMEOUT 30 PROPERTIES LABELS rest)
endif()

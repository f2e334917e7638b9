# k8s part: the observer against a loopback fake API server (tests/integration/k8s_*).
if(TARGET c2c_k8s)
  add_executable(k8s_observer_test ${CMAKE_CURRENT_LIST_DIR}/k8s_observer_test.cpp)
  target_link_libraries(k8s_observer_test PRIVATE c2c_k8s GTest::gtest_main)
  target_compile_definitions(k8s_observer_test PRIVATE
    C2C_FIXTURES_DEFAULT="${PROJECT_SOURCE_DIR}/../shared/fixtures/dra"
    C2C_K8S_FAKE_APISERVER="${CMAKE_CURRENT_LIST_DIR}/k8s_fake_apiserver.py")
  target_include_directories(k8s_observer_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit)
  c2c_warnings(k8s_observer_test)
  gtest_discover_tests(k8s_observer_test TEST_PREFIX "k8s." DISCOVERY_TIMEOUT 30 PROPERTIES TIMEOUT 120)
endif()

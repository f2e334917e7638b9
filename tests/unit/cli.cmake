# cli part: manifests, bounded YAML, output formats and connection options (tests/unit/cli_*.cpp).
if(TARGET c2c_cli)
  add_executable(cli_unit_tests
    ${CMAKE_CURRENT_LIST_DIR}/cli_manifests_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cli_output_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cli_listing_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cli_connection_test.cpp)
  target_link_libraries(cli_unit_tests PRIVATE c2c_cli GTest::gtest_main)
  target_link_libraries(cli_unit_tests PRIVATE c2c_test_source_dir)
  c2c_warnings(cli_unit_tests)
  gtest_discover_tests(cli_unit_tests TEST_PREFIX "cli." DISCOVERY_TIMEOUT 30)
endif()

# deploy/: YAML parses, CRD schemas vs the example policies and wrong ones (and the CLI agrees),
# least-privilege DaemonSet, RBAC, configs through claim2cored --check-config when it is built.
if(TARGET claim2core)
  set(C2C_CLI_DAEMON_PATH "")
  if(TARGET claim2cored)
    set(C2C_CLI_DAEMON_PATH $<TARGET_FILE:claim2cored>)
  endif()
  add_test(NAME cli.deploy_files
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/cli_deploy_test.py ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:claim2core> ${C2C_CLI_DAEMON_PATH})
  # Generated completions offer subcommands, options, get's resources and -o's values.
  add_test(NAME cli.completion COMMAND /bin/bash ${CMAKE_CURRENT_LIST_DIR}/cli_completion_test.sh $<TARGET_FILE:claim2core>)
  add_test(NAME cli.deploy_systemd_verify
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_systemd_verify.sh ${PROJECT_SOURCE_DIR} ${C2C_CLI_DAEMON_PATH})
  set_tests_properties(cli.deploy_systemd_verify PROPERTIES SKIP_RETURN_CODE 77)
endif()

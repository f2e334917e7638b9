# Issue 17 item 4 (first part): promtool check metrics on a live scrape of claim2cored.
if(TARGET claim2cored)
  add_test(NAME metrics.promtool_live_scrape COMMAND ${CMAKE_CURRENT_LIST_DIR}/metrics_promtool.sh $<TARGET_FILE:claim2cored>)
  set_tests_properties(metrics.promtool_live_scrape PROPERTIES TIMEOUT 60 SKIP_REGULAR_EXPRESSION "^SKIP:")
endif()
# The alert rules in deploy/monitoring: promtool check rules, and only metrics the daemon defines.
add_test(NAME metrics.alert_rules COMMAND ${CMAKE_CURRENT_LIST_DIR}/metrics_rules.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(metrics.alert_rules PROPERTIES TIMEOUT 60 SKIP_REGULAR_EXPRESSION "^SKIP:")

# gRPC health through reflection only (issue 17): list, describe, call grpc.health.v1.Health/Check.
if(TARGET claim2cored)
  add_test(NAME daemon.health_reflection
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/health_reflection_test.py $<TARGET_FILE:claim2cored>
                   ${CMAKE_CURRENT_BINARY_DIR}/health_reflection)
  set_tests_properties(daemon.health_reflection PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
endif()

# sd_notify READY/WATCHDOG/STOPPING, journal fields and zoned logfmt lines (issue 17), with stand-in
# sockets for NOTIFY_SOCKET and journald (a private mount namespace; ~6 s).
if(TARGET claim2cored AND TARGET claim2core AND TARGET c2c-fake-vllm)
  add_test(NAME daemon.systemd_protocols
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/daemon_systemd_test.py $<TARGET_FILE:claim2cored>
                   $<TARGET_FILE:claim2core> $<TARGET_FILE:c2c-fake-vllm> ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/daemon_systemd)
  set_tests_properties(daemon.systemd_protocols PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
endif()

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

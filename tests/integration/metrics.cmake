# Issue 17 item 4 (first part): promtool check metrics on a live scrape of claim2cored.
if(TARGET claim2cored)
  add_test(NAME metrics.promtool_live_scrape COMMAND ${CMAKE_CURRENT_LIST_DIR}/metrics_promtool.sh $<TARGET_FILE:claim2cored>)
  set_tests_properties(metrics.promtool_live_scrape PROPERTIES TIMEOUT 60 SKIP_REGULAR_EXPRESSION "^SKIP:")
endif()
# The alert rules in deploy/monitoring: promtool check rules, and only metrics the daemon defines.
add_test(NAME metrics.alert_rules COMMAND ${CMAKE_CURRENT_LIST_DIR}/metrics_rules.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(metrics.alert_rules PROPERTIES TIMEOUT 60 SKIP_REGULAR_EXPRESSION "^SKIP:")

if(TARGET claim2core)
  add_test(NAME cli.replay_exit_codes
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_replay_test.sh $<TARGET_FILE:claim2core> ${PROJECT_SOURCE_DIR})
endif()

if(TARGET claim2core)
  add_test(NAME cli.replay_exit_codes
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli_replay_test.sh $<TARGET_FILE:claim2core> ${PROJECT_SOURCE_DIR})
endif()

# The CLI against a real claim2cored on a private socket and pin root (root and bpffs, else skipped).
if(TARGET claim2core AND TARGET claim2cored AND TARGET c2c-fake-vllm)
  add_test(NAME cli.daemon_end_to_end
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/cli_daemon_test.py ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:claim2core> $<TARGET_FILE:claim2cored> $<TARGET_FILE:c2c-fake-vllm>)
  set_tests_properties(cli.daemon_end_to_end PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180)
endif()

# claim2core --server with mutual TLS against claim2cored's TCP listener (root, bpffs, openssl).
if(TARGET claim2core AND TARGET claim2cored)
  add_test(NAME cli.daemon_mutual_tls
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/cli_mtls_test.py
                   $<TARGET_FILE:claim2core> $<TARGET_FILE:claim2cored>)
  set_tests_properties(cli.daemon_mutual_tls PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()

# The vLLM adapter on the realistic stand-in (stock vLLM's setproctitle naming) and the seed's
# fixture: exactly the intended TIDs in the pinned map (root, bpffs, bpftool, setproctitle).
if(TARGET claim2core AND TARGET claim2cored AND TARGET c2c-fake-vllm)
  add_test(NAME cli.vllm_adapter
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/vllm_adapter_test.py ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:claim2core> $<TARGET_FILE:claim2cored> $<TARGET_FILE:c2c-fake-vllm>)
  set_tests_properties(cli.vllm_adapter PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180)
endif()

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

# Registered task roles (issue #14): the seed's llm-decode policy matches threads labelled with
# `claim2core role set`, the Python helper and by a uid-65534 process itself; a non-owner is
# refused (PERMISSION_DENIED, state unchanged); roles survive a restart while their task lives
# (root, bpffs, the v1 cpuset hierarchy for the pod cgroup, setpriv, python3-grpcio).
if(TARGET claim2core AND TARGET claim2cored AND TARGET c2c-role-example)
  add_test(NAME cli.task_roles
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/task_roles_test.py ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:claim2core> $<TARGET_FILE:claim2cored> $<TARGET_FILE:c2c-role-example>)
  set_tests_properties(cli.task_roles PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()

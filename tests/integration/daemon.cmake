# Part `daemon`: claim2cored driven over its real socket by an independent client (Debian's
# python3-grpcio, /usr/bin/python3), one ctest entry per scenario. Needs root and bpffs (skips
# otherwise). C2C_LOAD_SECONDS=30 ctest -R daemon.load runs the full load test (default 5 s).
if(TARGET claim2cored)
  add_executable(daemon_thread_churn ${CMAKE_CURRENT_LIST_DIR}/daemon_thread_churn.cpp)
  c2c_warnings(daemon_thread_churn)
  find_package(Threads REQUIRED)
  target_link_libraries(daemon_thread_churn PRIVATE Threads::Threads)
  set(C2C_DAEMON_IT_WORK ${CMAKE_CURRENT_BINARY_DIR}/daemon_it)
  # <script>:<scenario>; daemon_safety_test.py holds issue 12's promises (strict input, one daemon
  # per node state, a full state directory on tmpfs, a lost generation file, the fd limit, claims
  # across a restart) on the same harness.
  foreach(entry daemon_test:InvalidInput daemon_test:PeerCredentials daemon_test:MutualTls daemon_test:PolicyToMap
                daemon_test:DraPolicy daemon_test:DriftAndMetrics daemon_test:Restart daemon_test:KernelState
                daemon_test:Load daemon_test:IntentReasons daemon_test:TaskEventStorms daemon_test:LeaseRenewalWave daemon_test:LeaseAhead
                daemon_test:RealtimePriority daemon_test:RealtimeRefused
                daemon_safety_test:StrictInput daemon_safety_test:Exclusive daemon_safety_test:FullDisk
                daemon_safety_test:GenerationFile daemon_safety_test:FdLimit daemon_safety_test:ClaimRestart
                daemon_node_labels_test:NodeLabels)
    string(REPLACE ":" ";" parts ${entry})
    list(GET parts 0 script)
    list(GET parts 1 scenario)
    string(TOLOWER ${scenario} lower)
    add_test(NAME daemon.integration.${lower}
             COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/${script}.py $<TARGET_FILE:claim2cored>
                     ${PROJECT_SOURCE_DIR}/spec/claim2core.proto $<TARGET_FILE:daemon_thread_churn>
                     ${C2C_DAEMON_IT_WORK} ${scenario})
    # RUN_SERIAL only for the scenarios that time the daemon or the host's scheduler (a rate, a
    # pass's length, a read on the clock, SCHED_FIFO threads on the host); the others run beside
    # the rest of the suite, one daemon scenario at a time (RESOURCE_LOCK c2c_daemon_it: they share
    # the scripts' thread names and work directory), as claim2cored already does in the cli.* and
    # rest.* tests. ctest starts a RUN_SERIAL test only when both slots are empty (issue 44 item 7).
    if(lower MATCHES "^(load|leaserenewalwave|driftandmetrics|taskeventstorms|realtimepriority|realtimerefused)$")
      set(c2c_daemon_it_alone RUN_SERIAL TRUE)
    else()
      set(c2c_daemon_it_alone RESOURCE_LOCK c2c_daemon_it)
    endif()
    set_tests_properties(daemon.integration.${lower} PROPERTIES TIMEOUT 240 ${c2c_daemon_it_alone}
                         SKIP_REGULAR_EXPRESSION "skipped '")
  endforeach()
  # Names are bytes (issue 42): threads named with bytes that are not UTF-8 through gRPC, the CLI
  # and the REST gateway (daemon_names_test.py; the CLI's and REST's parts need their targets).
  set(C2C_NAMES_ENV "")
  if(TARGET claim2core)
    list(APPEND C2C_NAMES_ENV "C2C_CLI=$<TARGET_FILE:claim2core>")
  endif()
  if(TARGET claim2core-rest)
    list(APPEND C2C_NAMES_ENV "C2C_REST=$<TARGET_FILE:claim2core-rest>")
  endif()
  # Issue 46 on this host: a controller raises a thread kept waiting behind CPU hogs and steps
  # down after (schedstat, no sched_ext); `claim2core get decisions`, explain and (with the
  # gateway built) REST GET /api/v1/decisions and explain show it. ~12 s.
  add_test(NAME daemon.integration.controller
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/daemon_controller_test.py $<TARGET_FILE:claim2cored>
                   ${PROJECT_SOURCE_DIR}/spec/claim2core.proto $<TARGET_FILE:daemon_thread_churn>
                   ${C2C_DAEMON_IT_WORK} ControllerOnThisHost)
  set_tests_properties(daemon.integration.controller PROPERTIES TIMEOUT 60 RUN_SERIAL TRUE
                       SKIP_REGULAR_EXPRESSION "skipped '" ENVIRONMENT "${C2C_NAMES_ENV}")
  add_test(NAME daemon.integration.names
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/daemon_names_test.py $<TARGET_FILE:claim2cored>
                   ${PROJECT_SOURCE_DIR}/spec/claim2core.proto $<TARGET_FILE:daemon_thread_churn>
                   ${C2C_DAEMON_IT_WORK} NamesAreBytes)
  set_tests_properties(daemon.integration.names PROPERTIES TIMEOUT 120 RESOURCE_LOCK c2c_daemon_it
                       SKIP_REGULAR_EXPRESSION "skipped '" ENVIRONMENT "${C2C_NAMES_ENV}")
endif()

# The role socket attacked from the same host (issue 42): other uids via setpriv (non-UTF-8 role,
# idle connections past the per-uid and total limits while root registers, a bounded flood while
# gRPC Status answers, a reused pid, a second daemon on the same role socket). Bounded: ~15 s.
if(TARGET claim2cored)
  add_test(NAME daemon.integration.role_socket_attack
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/role_socket_attack_test.py ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:claim2cored>)
  # RUN_SERIAL: it times gRPC calls under a flood and steers the next pid (ns_last_pid).
  set_tests_properties(daemon.integration.role_socket_attack PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE
                       SKIP_RETURN_CODE 77)
  # The same pid reuse with the binding of kernels before 6.5 (no SO_PEERPIDFD), forced by
  # role_peer_identity: start-time: the pid's start time re-checked per request. ~5 s.
  add_test(NAME daemon.integration.role_socket_pid_reuse_start_time
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/role_socket_attack_test.py ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:claim2cored> --only pid-reuse --peer-identity start-time)
  set_tests_properties(daemon.integration.role_socket_pid_reuse_start_time PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE
                       SKIP_RETURN_CODE 77)
endif()

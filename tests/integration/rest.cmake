# The REST gateway against a real claim2cored on a private socket, pin root and port (root and
# bpffs, else skipped).
if(TARGET claim2core-rest AND TARGET claim2cored AND TARGET c2c-fake-vllm AND TARGET claim2core)
  add_test(NAME rest.api_end_to_end
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/rest_api_test.py ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:claim2cored> $<TARGET_FILE:claim2core-rest> $<TARGET_FILE:c2c-fake-vllm>
                   $<TARGET_FILE:claim2core>)
  set_tests_properties(rest.api_end_to_end PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180 LABELS rest)
endif()

# The original GUI's way in (issue 47): the password login (add-user, login, refresh, logout,
# users/self, roles, expired/tampered tokens, the throttle), /health's shape, CORS and --gui-dir
# (tests/integration/rest_login_test.py, ~5 s).
if(TARGET claim2core-rest AND TARGET claim2cored AND TARGET c2c-fake-vllm)
  add_test(NAME rest.login_end_to_end
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/rest_login_test.py $<TARGET_FILE:claim2cored>
                   $<TARGET_FILE:claim2core-rest> $<TARGET_FILE:c2c-fake-vllm>)
  set_tests_properties(rest.login_end_to_end PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS rest)
endif()

# The gateway under attack (issue 42), bounded load on loopback, each < 20 s: deep, duplicate-key
# and non-UTF-8 bodies, an idempotent PUT, a FIFO token file, /metrics (bodies); slow clients from
# one and from many loopback addresses, the per-client and total connection limits, the body
# deadline and the head size limit, over plain HTTP and over TLS (connections).
if(TARGET claim2core-rest AND TARGET claim2cored AND TARGET c2c-fake-vllm)
  function(c2c_rest_adversarial name)
    add_test(NAME ${name}
             COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/rest_adversarial_test.py $<TARGET_FILE:claim2cored>
                     $<TARGET_FILE:claim2core-rest> $<TARGET_FILE:c2c-fake-vllm> ${ARGN})
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS rest)
  endfunction()
  c2c_rest_adversarial(rest.adversarial --part bodies)
  c2c_rest_adversarial(rest.adversarial_connections --part connections)
  c2c_rest_adversarial(rest.adversarial_tls --part connections --tls)
endif()

# The web GUI in headless Chromium (chromium, chromium-driver, python3-selenium; else skipped).
# Screenshots go to the build tree; docs/gui/ holds the committed ones (src/rest/README.md).
if(TARGET claim2core-rest AND TARGET claim2cored AND TARGET c2c-fake-vllm)
  add_test(NAME rest.gui_browser
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/rest_gui_test.py $<TARGET_FILE:claim2cored>
                   $<TARGET_FILE:claim2core-rest> $<TARGET_FILE:c2c-fake-vllm> ${CMAKE_CURRENT_BINARY_DIR}/rest-gui)
  set_tests_properties(rest.gui_browser PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180 LABELS rest)
endif()

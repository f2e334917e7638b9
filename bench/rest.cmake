# bench/rest_gateway_bench.py (claim2core-rest vs the gRPC path it wraps): a smoke run in the
# default suite so the script does not rot (8 requests a path, no figure checked; skipped without
# root or bpffs). The figures: run it by hand (src/rest/README.md, "Latency").
if(TARGET claim2core-rest AND TARGET claim2cored AND TARGET c2c-fake-vllm)
  add_test(NAME bench_rest_smoke
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/rest_gateway_bench.py ${PROJECT_BINARY_DIR} 8 --warm-up 2)
  set_tests_properties(bench_rest_smoke PROPERTIES LABELS "bench;rest" SKIP_RETURN_CODE 77 TIMEOUT 60)
endif()

# bench/doors_under_attack.py (gRPC Status while the role socket and REST are attacked, issue 42): a
# smoke run so the script does not rot (one short window each, a small flood; no figure checked).
# The figures: run it by hand (bench/README.md, "Session 24").
if(TARGET claim2core-rest AND TARGET claim2cored AND TARGET c2c-fake-vllm)
  add_test(NAME bench_doors_smoke
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/doors_under_attack.py ${PROJECT_BINARY_DIR}
                   --windows 1 --window-seconds 2 --flood-lines 2000 --idle-connections 20 --slow-clients 4 --no-judge)
  set_tests_properties(bench_doors_smoke PROPERTIES LABELS "bench;rest" SKIP_RETURN_CODE 77 TIMEOUT 90)
endif()

# deploy/kubernetes: the kustomize base and overlays render to their committed output (with
# kubectl when present, always with a small Python renderer) and carry probes, scrape
# annotations, mount propagation, requests and a node-agent rolling update (issue 17).
add_test(NAME deploy.kustomize_render COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/deploy_kustomize_test.py
                                              ${PROJECT_SOURCE_DIR})

# Every rendered manifest against the Kubernetes OpenAPI schemas (npm kubernetes-models, locked in
# tools/k8s-validate; scripts/setup installs it), the policy examples against their CRD schemas.
add_test(NAME deploy.schemas COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/deploy_schema_test.py
                                     ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/deploy_schemas)
set_tests_properties(deploy.schemas PROPERTIES LABELS unit TIMEOUT 120 SKIP_RETURN_CODE 77)

# The Grafana dashboard: only metrics claim2cored exports, every query valid PromQL (promtool).
add_test(NAME deploy.dashboard COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/deploy_dashboard_test.py
                                       ${PROJECT_SOURCE_DIR})
set_tests_properties(deploy.dashboard PROPERTIES LABELS unit TIMEOUT 60)

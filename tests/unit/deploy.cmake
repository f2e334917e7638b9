# deploy/kubernetes: the kustomize base and overlays render to their committed output (with
# kubectl when present, always with a small Python renderer) and carry probes, scrape
# annotations, mount propagation, requests and a node-agent rolling update (issue 17).
add_test(NAME deploy.kustomize_render COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/deploy_kustomize_test.py
                                              ${PROJECT_SOURCE_DIR})

# Issue 17 item 1: the installed tree (cmake --install into a staging root, then moved) runs
# on its own. Needs the whole default build (the install rules name every operator binary, the
# BPF objects, man pages and completions); the demo part needs root and bpffs.
if(TARGET claim2cored AND TARGET claim2core AND TARGET c2c-fake-vllm AND TARGET c2c-sched AND TARGET claim2core-observer)
  add_test(NAME install.staged_demo
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/install_demo.sh ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:c2c-fake-vllm>)
  # /usr/lib/claim2core is the last place the binaries look: the package test must not have
  # installed one meanwhile.
  set_tests_properties(install.staged_demo PROPERTIES TIMEOUT 120 RESOURCE_LOCK c2c_system_install
                       SKIP_REGULAR_EXPRESSION "^SKIP:")
endif()

# Issue 17 item 2: the Debian package, installed on this machine with dpkg and purged (~15 s).
# It changes the machine's dpkg database and /usr, so it has the label `package` and
# scripts/test leaves it out unless asked: scripts/test -L package.
if(TARGET claim2cored AND TARGET claim2core)
  add_test(NAME package.deb_install_purge COMMAND ${CMAKE_CURRENT_LIST_DIR}/package_test.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(package.deb_install_purge PROPERTIES LABELS package TIMEOUT 300 RUN_SERIAL TRUE
                       RESOURCE_LOCK c2c_system_install SKIP_REGULAR_EXPRESSION "^SKIP:")
endif()

# Issue 17 item 3: the OCI image, built with buildah from scratch out of the package's files and
# run with podman as the DaemonSet runs it (~20 s; it adds the image to podman's store), label
# `package` like the .deb test: scripts/test -L package.
if(TARGET claim2cored AND TARGET claim2core AND TARGET claim2core-observer AND TARGET c2c-fake-vllm)
  add_test(NAME package.image_build_run
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/image_test.sh ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:claim2core> $<TARGET_FILE:c2c-fake-vllm>)
  set_tests_properties(package.image_build_run PROPERTIES LABELS package TIMEOUT 300 RUN_SERIAL TRUE
                       SKIP_REGULAR_EXPRESSION "^SKIP:")
endif()

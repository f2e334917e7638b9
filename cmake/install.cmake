# What `cmake --install` (and the Debian package, cmake/package.cmake) puts where. Layout:
#   bin/                          claim2cored claim2core claim2core-observer c2c-sched
#   lib/claim2core/               the BPF objects; found at run time as <bin>/../lib/claim2core
#                                 (src/host/bpf_object_path.hpp), so the tree is relocatable
#   lib/systemd/system/           claim2cored.service (ExecStart names this prefix's bindir)
#   share/claim2core/             the config example, CRDs and Kubernetes manifests
#   share/man/man1/               man pages (help2man from --help/--version), when help2man exists
#   share/bash-completion/, share/zsh/vendor-completions/   `claim2core completion bash|zsh`
# The BPF directory is fixed at lib/claim2core (not the multiarch LIBDIR) so the relative path
# the binaries use is the same for every prefix.
set(C2C_INSTALL_BPFDIR lib/claim2core)
set(C2C_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/claim2core)
set(C2C_OPERATOR_BINARIES claim2cored claim2core claim2core-observer c2c-sched)

foreach(bin ${C2C_OPERATOR_BINARIES})
  if(TARGET ${bin})
    install(TARGETS ${bin} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  endif()
endforeach()

if(DEFINED C2C_BPF_OUT)
  install(FILES ${C2C_BPF_OUT}/task_iter.bpf.o ${C2C_BPF_OUT}/task_events.bpf.o ${C2C_BPF_OUT}/policy_maps.bpf.o
          DESTINATION ${C2C_INSTALL_BPFDIR} COMPONENT runtime)
  # The scheduler object exists only once the test-bed kernel is cached (bpf/sched.cmake).
  if(C2C_SCHED_BPF_OBJECT)
    install(FILES ${C2C_SCHED_BPF_OBJECT} DESTINATION ${C2C_INSTALL_BPFDIR} COMPONENT runtime OPTIONAL)
  endif()
endif()

# The unit with ExecStart in the prefix given at install time (cmake --install --prefix, or /usr
# for the package); deploy/systemd keeps /usr/local/bin for a manual copy.
install(CODE "
  file(READ \"${PROJECT_SOURCE_DIR}/deploy/systemd/claim2cored.service\" unit)
  string(REPLACE \"/usr/local/bin/claim2cored\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/claim2cored\" unit \"\${unit}\")
  set(dest \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\")
  message(STATUS \"Installing: \${dest}/claim2cored.service\")
  file(MAKE_DIRECTORY \"\${dest}\")
  file(WRITE \"\${dest}/claim2cored.service\" \"\${unit}\")
" COMPONENT runtime)

install(FILES ${PROJECT_SOURCE_DIR}/deploy/claim2cored.yaml DESTINATION ${C2C_INSTALL_DATADIR}
        RENAME claim2cored.yaml.example COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/kubernetes/ DESTINATION ${C2C_INSTALL_DATADIR}/kubernetes
        COMPONENT runtime FILES_MATCHING PATTERN "*.yaml" PATTERN "*.json")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/monitoring/ DESTINATION ${C2C_INSTALL_DATADIR}/monitoring
        COMPONENT runtime FILES_MATCHING PATTERN "*.yaml" PATTERN "*.json")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/policies/ DESTINATION ${C2C_INSTALL_DATADIR}/examples/policies
        COMPONENT runtime FILES_MATCHING PATTERN "*.yaml")

# Man pages and completions are produced by running the built binaries, so they are always the
# binaries' own --help text.
set(C2C_DOC_OUT ${CMAKE_BINARY_DIR}/doc)
find_program(C2C_HELP2MAN help2man)
set(c2c_doc_outputs "")
if(C2C_HELP2MAN)
  foreach(bin ${C2C_OPERATOR_BINARIES})
    if(TARGET ${bin})
      add_custom_command(
        OUTPUT ${C2C_DOC_OUT}/${bin}.1
        COMMAND ${CMAKE_COMMAND} -E make_directory ${C2C_DOC_OUT}
        COMMAND ${C2C_HELP2MAN} --no-info --no-discard-stderr --section=1 --output=${C2C_DOC_OUT}/${bin}.1 $<TARGET_FILE:${bin}>
        DEPENDS ${bin}
        COMMENT "help2man ${bin}.1")
      list(APPEND c2c_doc_outputs ${C2C_DOC_OUT}/${bin}.1)
      install(FILES ${C2C_DOC_OUT}/${bin}.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
    endif()
  endforeach()
else()
  message(STATUS "help2man not found (scripts/setup installs it): no man pages")
endif()
if(TARGET claim2core)
  add_custom_command(
    OUTPUT ${C2C_DOC_OUT}/claim2core.bash ${C2C_DOC_OUT}/_claim2core
    COMMAND ${CMAKE_COMMAND} -E make_directory ${C2C_DOC_OUT}
    COMMAND sh -c "$<TARGET_FILE:claim2core> completion bash > ${C2C_DOC_OUT}/claim2core.bash"
    COMMAND sh -c "$<TARGET_FILE:claim2core> completion zsh > ${C2C_DOC_OUT}/_claim2core"
    DEPENDS claim2core
    COMMENT "claim2core completion bash|zsh"
    VERBATIM)
  list(APPEND c2c_doc_outputs ${C2C_DOC_OUT}/claim2core.bash ${C2C_DOC_OUT}/_claim2core)
  install(FILES ${C2C_DOC_OUT}/claim2core.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
          RENAME claim2core COMPONENT runtime)
  install(FILES ${C2C_DOC_OUT}/_claim2core DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions
          COMPONENT runtime)
endif()
if(c2c_doc_outputs)
  add_custom_target(c2c_docs ALL DEPENDS ${c2c_doc_outputs})
endif()

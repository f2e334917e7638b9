# The front ends' layer rules (issue 44, tests/unit/frontend_layering_check.py): no front end
# (src/cli, src/rest, src/k8s) includes another or the fuzz harness, no CMake file edits a
# target another folder defines, and no header outside src/api and src/daemon/service includes
# protobuf (directly or through another header); the seeded run shows the check catches one
# violation of each (and tests/mutants/layering.tsv seeds more, mutants.layering).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME frontends.layering
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/frontend_layering_check.py ${PROJECT_SOURCE_DIR})
  add_test(NAME frontends.layering_seeded
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/frontend_layering_check.py --seeded ${PROJECT_SOURCE_DIR})
  set_tests_properties(frontends.layering frontends.layering_seeded PROPERTIES LABELS unit TIMEOUT 60)
endif()

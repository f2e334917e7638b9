# Part `controller` (label extended: eight compiles and links of the controller's property test,
# ~15 s of CPU, 2 min on 2 busy cores): one seeded bug per property CTL-1..CTL-6 of the controller
# (controller.tsv), each of which property.controller must catch (spec/state-machine.md §10).
add_test(NAME mutants.controller COMMAND ${CMAKE_CURRENT_LIST_DIR}/controller_run)
set_tests_properties(mutants.controller PROPERTIES TIMEOUT 900 LABELS "mutants;extended" COST 200)

# Seeded bugs in the fake API server, each a way it once differed from the real kube-apiserver
# (issue 48), that k8s.real.parity must catch (realk8s.tsv; the real server measured once, then
# ~15 s a mutant; no build). Label extended (~2.5 min): scripts/test -L extended runs it; it needs
# the real binaries, whose build (k8s.real.binaries) ctest then runs first as the fixture.
add_test(NAME mutants.realk8s COMMAND ${CMAKE_CURRENT_LIST_DIR}/realk8s_run)
set_tests_properties(mutants.realk8s PROPERTIES TIMEOUT 1200 LABELS "mutants;extended" SKIP_RETURN_CODE 77
                     FIXTURES_REQUIRED realk8s_binaries)

# Seeded bugs in the 2x2 experiment's judge of "D no worse than min(B, C)" (judge.tsv,
# tests/vm/experiment_table.py) against its unit test; ~35 s, no build.
add_test(NAME mutants.judge COMMAND ${CMAKE_CURRENT_LIST_DIR}/judge_run)
set_tests_properties(mutants.judge PROPERTIES TIMEOUT 600 LABELS "mutants")

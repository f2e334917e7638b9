# Part `mirror`: full reconcile of 100,000 entries against the real pinned map, side by side with
# one `bpftool map update` per entry (sampled and extrapolated) and with the mirror's own
# per-key path. Needs root and bpffs. Run: build-<dir>/bench/mirror_reconcile_bench
# Only when src/mirror is part of this build (C2C_PARTS).
if(TARGET c2c_mirror)
  add_executable(mirror_reconcile_bench ${CMAKE_CURRENT_LIST_DIR}/mirror_reconcile_bench.cpp)
  target_link_libraries(mirror_reconcile_bench PRIVATE c2c_mirror)
  c2c_warnings(mirror_reconcile_bench)
endif()

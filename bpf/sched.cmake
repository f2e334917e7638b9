# The claim2core sched_ext scheduler (part: sched). It needs the vmlinux.h and scx headers of the
# 6.12 kernel built by tests/vm/build-kernel.sh (the host kernel has no sched_ext types), so it is
# only built when that kernel is cached. tests/vm/run-scenarios.sh builds the kernel, re-runs the
# configure step and builds this target, so the VM test never depends on a stale object.
# $C2C_VM_KERNEL_DIR (at configure time) names another cached kernel dir, as in run-scenarios.sh.
if(DEFINED ENV{C2C_VM_KERNEL_DIR})
  set(C2C_VM_KERNEL_DIR $ENV{C2C_VM_KERNEL_DIR})
  set(c2c_vm_kernel_rc 0)
else()
  execute_process(
    COMMAND ${PROJECT_SOURCE_DIR}/tests/vm/build-kernel.sh --print-dir
    OUTPUT_VARIABLE C2C_VM_KERNEL_DIR OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE c2c_vm_kernel_rc ERROR_QUIET)
endif()
set(C2C_VM_KERNEL_DIR "${C2C_VM_KERNEL_DIR}" CACHE INTERNAL "cache dir of the test-bed kernel")
set(C2C_SCHED_BPF_OBJECT "" CACHE INTERNAL "")
if(c2c_vm_kernel_rc EQUAL 0 AND EXISTS ${C2C_VM_KERNEL_DIR}/.done)
  set(c2c_scx_include ${C2C_VM_KERNEL_DIR}/src/tools/sched_ext/include)
  c2c_bpf_object(claim2core claim2core.bpf.c ${C2C_VM_KERNEL_DIR}
                 -I${c2c_scx_include} -I${c2c_scx_include}/bpf-compat)
  set(C2C_SCHED_BPF_OBJECT ${C2C_BPF_OUT}/claim2core.bpf.o CACHE INTERNAL "")

  # Seeded bugs in the scheduler's INV-8 guards, each built as its own object: the guest's
  # starvation scenario loads them and must fail (tests/vm/guest-init.sh, tests/mutants/README.md).
  # A text that is no longer in claim2core.bpf.c is an error, so a mutant can never silently turn
  # into the unmutated scheduler.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/claim2core.bpf.c)
  file(READ ${CMAKE_CURRENT_SOURCE_DIR}/claim2core.bpf.c c2c_sched_source)
  set(C2C_SCHED_MUTANTS "" CACHE INTERNAL "")
  function(c2c_sched_mutant name from to)
    string(FIND "${c2c_sched_source}" "${from}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "sched mutant ${name}: text not found in claim2core.bpf.c: ${from}")
    endif()
    string(REPLACE "${from}" "${to}" mutated "${c2c_sched_source}")
    set(src ${CMAKE_CURRENT_BINARY_DIR}/mutants/claim2core-${name}.bpf.c)
    file(WRITE ${src} "${mutated}")
    c2c_bpf_object(claim2core-${name} ${src} ${C2C_VM_KERNEL_DIR} -I${c2c_scx_include} -I${c2c_scx_include}/bpf-compat)
    set(C2C_SCHED_MUTANTS "${C2C_SCHED_MUTANTS};${name}" CACHE INTERNAL "")
  endfunction()
  # The CPU's boost budget never runs out.
  c2c_sched_mutant(inv8-unbounded-boost
                   "return cc->boosted_ns < BOOST_WINDOW_NS * BOOST_BUDGET_PCT / 100"
                   "return cc->boosted_ns >= 0")
  # A queue that waited past its starvation bound is not served first.
  c2c_sched_mutant(inv8-no-starvation-rescue
                   "if (now - served <= bound || !scx_bpf_consume(dsq))"
                   "if (bound || served)")
  message(STATUS "sched: building claim2core.bpf.o against ${C2C_VM_KERNEL_DIR}")
else()
  message(STATUS "sched: test-bed kernel not cached yet (tests/vm/build-kernel.sh); "
                 "claim2core.bpf.o is built by the vm_scenarios test")
endif()

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

  # Seeded bugs in the scheduler's guards (bpf/c2c_guards.h), one exact-text replacement per row of
  # tests/mutants/kernel.tsv; the rows with a guest check get their own object, built from
  # claim2core.bpf.c next to the mutated header (a quoted include finds the includer's directory
  # first). The guest loads each and runs its check (tests/vm/guest-init.sh), named in
  # claim2core-<name>.check. A text no longer in the header is an error, so a mutant can never
  # silently turn into the unmutated scheduler.
  set(c2c_mutant_table ${PROJECT_SOURCE_DIR}/tests/mutants/kernel.tsv)
  # claim2core.bpf.c too: each mutant's copy of it is made here, at configure time.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/claim2core.bpf.c
               ${CMAKE_CURRENT_SOURCE_DIR}/c2c_guards.h ${c2c_mutant_table})
  file(READ ${CMAKE_CURRENT_SOURCE_DIR}/c2c_guards.h c2c_guards_source)
  file(STRINGS ${c2c_mutant_table} c2c_mutant_rows REGEX "^[^#]")
  set(C2C_SCHED_MUTANTS "" CACHE INTERNAL "")
  foreach(row IN LISTS c2c_mutant_rows)
    # Tabs to a separator no C text here contains; ';' in the texts would split the list.
    string(REPLACE ";" "<semicolon>" row "${row}")
    string(REPLACE "\t" ";" cols "${row}")
    list(LENGTH cols ncols)
    if(NOT ncols EQUAL 7)
      message(FATAL_ERROR "tests/mutants/kernel.tsv: a row has ${ncols} columns, want 7: ${row}")
    endif()
    list(GET cols 0 name)
    list(GET cols 3 check)
    list(GET cols 5 from)
    list(GET cols 6 to)
    string(REPLACE "<semicolon>" ";" from "${from}")
    string(REPLACE "<semicolon>" ";" to "${to}")
    if(check STREQUAL "-")
      continue()
    endif()
    string(FIND "${c2c_guards_source}" "${from}" at)
    string(FIND "${c2c_guards_source}" "${from}" last REVERSE)
    if(at EQUAL -1)
      message(FATAL_ERROR "sched mutant ${name}: text not found in c2c_guards.h: ${from}")
    elseif(NOT at EQUAL last)
      message(FATAL_ERROR "sched mutant ${name}: text found more than once in c2c_guards.h: ${from}")
    endif()
    string(REPLACE "${from}" "${to}" mutated "${c2c_guards_source}")
    set(dir ${CMAKE_CURRENT_BINARY_DIR}/mutants/${name})
    # Written through COPYONLY copies, which touch a file only when it changes (no rebuild per configure).
    file(WRITE ${dir}/c2c_guards.h.new "${mutated}")
    configure_file(${dir}/c2c_guards.h.new ${dir}/c2c_guards.h COPYONLY)
    configure_file(${CMAKE_CURRENT_SOURCE_DIR}/claim2core.bpf.c ${dir}/claim2core.bpf.c COPYONLY)
    file(WRITE ${dir}/check.new "${check}\n")
    configure_file(${dir}/check.new ${C2C_BPF_OUT}/claim2core-${name}.check COPYONLY)
    c2c_bpf_object(claim2core-${name} ${dir}/claim2core.bpf.c ${C2C_VM_KERNEL_DIR}
                   -I${c2c_scx_include} -I${c2c_scx_include}/bpf-compat)
    set(C2C_SCHED_MUTANTS "${C2C_SCHED_MUTANTS};${name}" CACHE INTERNAL "")
  endforeach()
  # Seeded bugs in claim2core.bpf.c itself (tests/mutants/scheduler.tsv): the same, with the
  # replacement in the scheduler's file and the unmutated header beside it.
  set(c2c_sched_mutant_table ${PROJECT_SOURCE_DIR}/tests/mutants/scheduler.tsv)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${c2c_sched_mutant_table})
  file(READ ${CMAKE_CURRENT_SOURCE_DIR}/claim2core.bpf.c c2c_sched_source)
  file(STRINGS ${c2c_sched_mutant_table} c2c_sched_mutant_rows REGEX "^[^#]")
  foreach(row IN LISTS c2c_sched_mutant_rows)
    string(REPLACE ";" "<semicolon>" row "${row}")
    string(REPLACE "\t" ";" cols "${row}")
    list(LENGTH cols ncols)
    if(NOT ncols EQUAL 6)
      message(FATAL_ERROR "tests/mutants/scheduler.tsv: a row has ${ncols} columns, want 6: ${row}")
    endif()
    list(GET cols 0 name)
    list(GET cols 2 check)
    list(GET cols 4 from)
    list(GET cols 5 to)
    string(REPLACE "<semicolon>" ";" from "${from}")
    string(REPLACE "<semicolon>" ";" to "${to}")
    string(FIND "${c2c_sched_source}" "${from}" at)
    string(FIND "${c2c_sched_source}" "${from}" last REVERSE)
    if(at EQUAL -1)
      message(FATAL_ERROR "sched mutant ${name}: text not found in claim2core.bpf.c: ${from}")
    elseif(NOT at EQUAL last)
      message(FATAL_ERROR "sched mutant ${name}: text found more than once in claim2core.bpf.c: ${from}")
    endif()
    string(REPLACE "${from}" "${to}" mutated "${c2c_sched_source}")
    set(dir ${CMAKE_CURRENT_BINARY_DIR}/mutants/${name})
    file(WRITE ${dir}/claim2core.bpf.c.new "${mutated}")
    configure_file(${dir}/claim2core.bpf.c.new ${dir}/claim2core.bpf.c COPYONLY)
    configure_file(${CMAKE_CURRENT_SOURCE_DIR}/c2c_guards.h ${dir}/c2c_guards.h COPYONLY)
    file(WRITE ${dir}/check.new "${check}\n")
    configure_file(${dir}/check.new ${C2C_BPF_OUT}/claim2core-${name}.check COPYONLY)
    c2c_bpf_object(claim2core-${name} ${dir}/claim2core.bpf.c ${C2C_VM_KERNEL_DIR}
                   -I${c2c_scx_include} -I${c2c_scx_include}/bpf-compat)
    set(C2C_SCHED_MUTANTS "${C2C_SCHED_MUTANTS};${name}" CACHE INTERNAL "")
  endforeach()
  message(STATUS "sched: building claim2core.bpf.o against ${C2C_VM_KERNEL_DIR}")
else()
  message(STATUS "sched: test-bed kernel not cached yet (tests/vm/build-kernel.sh); "
                 "claim2core.bpf.o is built by the vm_scenarios test")
endif()

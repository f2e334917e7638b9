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

  # Seeded bugs, one exact-text replacement per row of a table: tests/mutants/kernel.tsv in the
  # scheduler's guards (bpf/c2c_guards.h), tests/mutants/scheduler.tsv in claim2core.bpf.c itself.
  # The rows with a guest check get their own object, built from both files in one directory, one
  # of them mutated (a quoted include finds the includer's directory first). The guest loads each
  # and runs its check (tests/vm/guest-init.sh), named in claim2core-<name>.check. A text not
  # found exactly once in its file is an error, so a mutant can never silently turn into the
  # unmutated scheduler, nor change more than its row says.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/claim2core.bpf.c
               ${CMAKE_CURRENT_SOURCE_DIR}/c2c_guards.h ${PROJECT_SOURCE_DIR}/tests/mutants/kernel.tsv
               ${PROJECT_SOURCE_DIR}/tests/mutants/scheduler.tsv)
  set(C2C_SCHED_MUTANTS "" CACHE INTERNAL "")
  # c2c_sched_mutants(<table>): the table's format is tests/mutants/mutate.py's (a header line
  # naming the tab-separated columns; `file` the mutated file, bpf/c2c_guards.h or
  # bpf/claim2core.bpf.c; `guest` the check, `-` for none; `from` and `to` with \n and \t escapes).
  function(c2c_sched_mutants table)
    set(files claim2core.bpf.c c2c_guards.h)
    file(STRINGS ${PROJECT_SOURCE_DIR}/${table} rows REGEX "^[^#]")
    set(header "")
    foreach(row IN LISTS rows)
      # Tabs to a separator no C text here contains; ';' in the texts would split the list.
      string(REPLACE ";" "<semicolon>" row "${row}")
      string(REPLACE "\t" ";" cols "${row}")
      if(NOT header)
        set(header ${cols})
        list(LENGTH header ncols_want)
        foreach(c name file guest from to)
          list(FIND header ${c} i_${c})
          if(i_${c} EQUAL -1)
            message(FATAL_ERROR "${table}: the header line has no column '${c}'")
          endif()
        endforeach()
        continue()
      endif()
      list(LENGTH cols ncols)
      if(NOT ncols EQUAL ncols_want)
        message(FATAL_ERROR "${table}: a row has ${ncols} columns, want ${ncols_want}: ${row}")
      endif()
      list(GET cols ${i_name} name)
      list(GET cols ${i_file} path)
      list(GET cols ${i_guest} check)
      list(GET cols ${i_from} from)
      list(GET cols ${i_to} to)
      if(check STREQUAL "-")
        continue()
      endif()
      get_filename_component(mutated_file ${path} NAME)
      if(NOT path STREQUAL "bpf/${mutated_file}" OR NOT mutated_file IN_LIST files)
        message(FATAL_ERROR "sched mutant ${name}: ${path} is not one of the scheduler's files (bpf/: ${files})")
      endif()
      file(READ ${CMAKE_CURRENT_SOURCE_DIR}/${mutated_file} source)
      foreach(t from to)
        string(REPLACE "<semicolon>" ";" ${t} "${${t}}")
        string(REPLACE "\\n" "\n" ${t} "${${t}}")
        string(REPLACE "\\t" "\t" ${t} "${${t}}")
      endforeach()
      string(FIND "${source}" "${from}" at)
      string(FIND "${source}" "${from}" last REVERSE)
      if(at EQUAL -1)
        message(FATAL_ERROR "sched mutant ${name}: text not found in ${mutated_file}: ${from}")
      elseif(NOT at EQUAL last)
        message(FATAL_ERROR "sched mutant ${name}: text found more than once in ${mutated_file}: ${from}")
      endif()
      string(REPLACE "${from}" "${to}" mutated "${source}")
      set(dir ${CMAKE_CURRENT_BINARY_DIR}/mutants/${name})
      # Written through COPYONLY copies, which touch a file only when it changes (no rebuild per
      # configure).
      file(WRITE ${dir}/${mutated_file}.new "${mutated}")
      configure_file(${dir}/${mutated_file}.new ${dir}/${mutated_file} COPYONLY)
      foreach(f IN LISTS files)
        if(NOT f STREQUAL mutated_file)
          configure_file(${CMAKE_CURRENT_SOURCE_DIR}/${f} ${dir}/${f} COPYONLY)
        endif()
      endforeach()
      file(WRITE ${dir}/check.new "${check}\n")
      configure_file(${dir}/check.new ${C2C_BPF_OUT}/claim2core-${name}.check COPYONLY)
      c2c_bpf_object(claim2core-${name} ${dir}/claim2core.bpf.c ${C2C_VM_KERNEL_DIR}
                     -I${c2c_scx_include} -I${c2c_scx_include}/bpf-compat)
      set(C2C_SCHED_MUTANTS "${C2C_SCHED_MUTANTS};${name}" CACHE INTERNAL "")
    endforeach()
  endfunction()
  c2c_sched_mutants(tests/mutants/kernel.tsv)
  c2c_sched_mutants(tests/mutants/scheduler.tsv)
  message(STATUS "sched: building claim2core.bpf.o against ${C2C_VM_KERNEL_DIR}")
else()
  message(STATUS "sched: test-bed kernel not cached yet (tests/vm/build-kernel.sh); "
                 "claim2core.bpf.o is built by the vm_scenarios test")
endif()

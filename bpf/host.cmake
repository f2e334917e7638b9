# Part `host`: the task iterator and the task lifecycle event programs (src/host loads them).
#
# The shared vmlinux.h rule in bpf/CMakeLists.txt lacks VERBATIM, so its '>' redirect is parsed by
# the outer shell and writes to " <path>" (leading space): the rule fails on a fresh tree. Until
# that is fixed, this part generates its own copy of the running kernel's vmlinux.h.
set(C2C_HOST_PART_VMLINUX_DIR ${C2C_BPF_OUT}/host-part)
add_custom_command(
  OUTPUT ${C2C_HOST_PART_VMLINUX_DIR}/vmlinux.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${C2C_HOST_PART_VMLINUX_DIR}
  COMMAND sh -c "${C2C_BPFTOOL} btf dump file /sys/kernel/btf/vmlinux format c > ${C2C_HOST_PART_VMLINUX_DIR}/vmlinux.h"
  COMMENT "Generating vmlinux.h (part host) from the running kernel's BTF"
  VERBATIM)
c2c_bpf_object(task_iter task_iter.bpf.c ${C2C_HOST_PART_VMLINUX_DIR})
c2c_bpf_object(task_events task_events.bpf.c ${C2C_HOST_PART_VMLINUX_DIR})

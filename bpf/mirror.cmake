# Part `mirror`: the pinned policy map set (maps only, for BTF). src/mirror opens the object.
#
# The shared vmlinux.h rule in bpf/CMakeLists.txt lacks VERBATIM (its '>' target gets a leading
# space and the rule fails on a fresh tree); until the lead fixes it, this part makes its own copy.
set(C2C_MIRROR_VMLINUX_DIR ${C2C_BPF_OUT}/mirror-part)
add_custom_command(
  OUTPUT ${C2C_MIRROR_VMLINUX_DIR}/vmlinux.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${C2C_MIRROR_VMLINUX_DIR}
  COMMAND sh -c "${C2C_BPFTOOL} btf dump file /sys/kernel/btf/vmlinux format c > ${C2C_MIRROR_VMLINUX_DIR}/vmlinux.h"
  COMMENT "Generating vmlinux.h (part mirror) from the running kernel's BTF"
  VERBATIM)
c2c_bpf_object(policy_maps policy_maps.bpf.c ${C2C_MIRROR_VMLINUX_DIR})

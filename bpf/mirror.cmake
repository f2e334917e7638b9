# Part `mirror`: the pinned policy map set (maps only, for BTF). src/mirror opens the object.
c2c_bpf_object(policy_maps policy_maps.bpf.c ${C2C_HOST_VMLINUX_DIR})

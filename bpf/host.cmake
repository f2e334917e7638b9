# Part `host`: the task iterator and the task lifecycle event programs (src/host loads them).
c2c_bpf_object(task_iter task_iter.bpf.c ${C2C_HOST_VMLINUX_DIR})
c2c_bpf_object(task_events task_events.bpf.c ${C2C_HOST_VMLINUX_DIR})
# Part `host`: waker -> wakee edges and run counts of watched threads (issue 46 item 4).
c2c_bpf_object(wakeup_edges wakeup_edges.bpf.c ${C2C_HOST_VMLINUX_DIR})

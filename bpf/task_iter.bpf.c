// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * Task iterator: one pass over every thread of the system (or of one process when user space
 * attaches it with a pid filter), emitting one struct c2c_task_record per thread through
 * bpf_seq_write. User space reads the iterator fd to EOF (src/host/task_iter.cpp).
 *
 * start_ticks is computed exactly like /proc stat field 22: start_boottime / 10,000,000.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "claim2core_abi.h"
#include "task_cgroup_id.bpf.h"

char LICENSE[] SEC("license") = "GPL";

SEC("iter/task")
int c2c_task_iter(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct c2c_task_record rec = {};

	if (!task) /* end of iteration */
		return 0;

	rec.kind = C2C_EV_SNAPSHOT;
	rec.tid = (__u32)BPF_CORE_READ(task, pid);
	rec.tgid = (__u32)BPF_CORE_READ(task, tgid);
	rec.start_ticks = BPF_CORE_READ(task, start_boottime) / C2C_NSEC_PER_TICK;
	rec.cgroup_id = c2c_task_cgroup_id(task);
	BPF_CORE_READ_STR_INTO(&rec.comm, task, comm);
	bpf_seq_write(seq, &rec, sizeof(rec));
	return 0;
}

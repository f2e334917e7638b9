// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * Task lifecycle events over a BPF ring buffer (C2C_EVENTS_MAP_NAME), so that user space learns
 * about a new or renamed thread within milliseconds instead of at the next /proc scan.
 *
 * BTF tracepoints (tp_btf) are used: they need no tracefs mount and give typed arguments.
 *  - sched_process_fork(parent, child): the child's start_boottime is already set here (it is
 *    set in copy_process after ops.init_task), but its comm is still the parent's: a thread
 *    named with pthread_setname_np shows up as a later C2C_EV_RENAME.
 *  - task_rename(task, comm): fires in __set_task_comm BEFORE task->comm is overwritten, so the
 *    new name is taken from the argument, not from the task. `reserved` carries the hash of the
 *    process title (task_title_hash.h), read from the renaming process's own argv[0].
 *  - sched_process_exec(p, old_pid, bprm): after de_thread, so p->pid is the thread-group
 *    leader's tid even when a non-leader thread called exec; `reserved` carries old_pid so that
 *    user space can retire the exec'ing thread's former tid.
 *  - sched_process_exit(p, group_dead): one per exiting thread.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "claim2core_abi.h"
#include "task_cgroup_id.bpf.h"
#include "task_title_hash.h"

char LICENSE[] SEC("license") = "GPL";

#include "events_ringbuf.bpf.h"

/*
 * Records that did not fit into the ring buffer: user space must rescan when this grows. One
 * counter for every CPU (a drop is rare, an atomic add then costs nothing that matters), mapped
 * into the reader, which reads it with a load instead of a bpf() call per look.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} c2c_ev_drops SEC(".maps");

/*
 * 1 while the reader polls the ring buffer on its own clock (a storm of forks and exits,
 * src/daemon/loop/task_event_pacing.hpp): records are then written without waking it. 0 (the
 * default, and whenever nobody sets it): the kernel wakes the reader for a record written when it
 * had read everything, i.e. at once when it keeps up.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} c2c_ev_quiet SEC(".maps");

/* argv[0] of a renaming process (larger than the BPF stack allows). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[C2C_TITLE_HASH_BYTES + 1]);
} c2c_title_buf SEC(".maps");

/*
 * The hash of task's process title (task_title_hash.h), or 0 when it cannot be read here: only
 * the current process's memory can be (a rename of a thread of another process, through
 * /proc/<pid>/task/<tid>/comm, is read by the daemon as before), and only a resident page.
 */
static __always_inline __u32 title_hash_of(struct task_struct *task)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	__u32 zero = 0, h = C2C_TITLE_HASH_SEED;
	unsigned long arg_start;
	char *buf;
	long n;
	int i;

	if (BPF_CORE_READ(task, tgid) != cur->tgid || !cur->mm)
		return 0;
	buf = bpf_map_lookup_elem(&c2c_title_buf, &zero);
	if (!buf)
		return 0;
	arg_start = BPF_CORE_READ(cur, mm, arg_start);
	n = bpf_probe_read_user_str(buf, C2C_TITLE_HASH_BYTES + 1, (const void *)arg_start);
	/* Unreadable, or an empty argv[0] (the daemon's title is then the executable's path). */
	if (n <= 1)
		return 0;
	for (i = 0; i < C2C_TITLE_HASH_BYTES; i++) {
		unsigned char c = buf[i];

		if (!c)
			break;
		h = c2c_title_hash_step(h, c);
	}
	return c2c_title_hash_final(h);
}

static __always_inline __u64 submit_flags(void)
{
	__u32 zero = 0;
	__u32 *quiet = bpf_map_lookup_elem(&c2c_ev_quiet, &zero);

	return quiet && *quiet ? BPF_RB_NO_WAKEUP : 0;
}

static __always_inline void count_drop(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&c2c_ev_drops, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline struct c2c_task_record *reserve(__u32 kind, struct task_struct *task)
{
	struct c2c_task_record *rec = bpf_ringbuf_reserve(&c2c_events, sizeof(*rec), 0);

	if (!rec) {
		count_drop();
		return NULL;
	}
	rec->kind = kind;
	rec->tid = (__u32)BPF_CORE_READ(task, pid);
	rec->tgid = (__u32)BPF_CORE_READ(task, tgid);
	rec->reserved = 0;
	rec->start_ticks = BPF_CORE_READ(task, start_boottime) / C2C_NSEC_PER_TICK;
	rec->cgroup_id = c2c_task_cgroup_id(task);
	return rec;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(c2c_on_fork, struct task_struct *parent, struct task_struct *child)
{
	struct c2c_task_record *rec = reserve(C2C_EV_NEW, child);

	if (!rec)
		return 0;
	BPF_CORE_READ_STR_INTO(&rec->comm, child, comm);
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(c2c_on_rename, struct task_struct *task, const char *comm)
{
	struct c2c_task_record *rec = reserve(C2C_EV_RENAME, task);

	if (!rec)
		return 0;
	if (bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), comm) < 0)
		rec->comm[0] = '\0';
	/* The daemon reads the title after a leader's rename whatever the hash (task_title_hash.h):
	 * its argv is not read here for nothing. */
	rec->reserved = rec->tid == rec->tgid ? 0 : title_hash_of(task);
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(c2c_on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct c2c_task_record *rec = reserve(C2C_EV_EXEC, p);

	if (!rec)
		return 0;
	rec->reserved = (__u32)old_pid;
	BPF_CORE_READ_STR_INTO(&rec->comm, p, comm);
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(c2c_on_exit, struct task_struct *p)
{
	struct c2c_task_record *rec = reserve(C2C_EV_EXIT, p);

	if (!rec)
		return 0;
	BPF_CORE_READ_STR_INTO(&rec->comm, p, comm);
	bpf_ringbuf_submit(rec, submit_flags());
	return 0;
}

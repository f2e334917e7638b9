/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * The one definition of everything the BPF programs and user space share:
 * pin paths, map names, keys, values, event records and statistics.
 *
 * Included by BPF C (after vmlinux.h) and by C++ (src/host, src/daemon). The layout is
 * pinned by static assertions below; a change to any struct must bump C2C_ABI_VERSION.
 *
 * Task identity (spec/state-machine.md, "Task identity"): a task is (tid, start_ticks),
 * where tid is the global (init pid namespace) thread id and start_ticks is
 * task_struct.start_boottime / C2C_NSEC_PER_TICK, which equals field 22 of
 * /proc/<tgid>/task/<tid>/stat on a kernel with USER_HZ = 100.
 */
#ifndef CLAIM2CORE_ABI_H
#define CLAIM2CORE_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* 2: c2c_stats.boost_budget_exhausted; 3: the oracle_* counters; 4: the per-task counters
 * (c2c_task_cnt, struct c2c_task_counters) and c2c_stats.preferred_spills; 5: c2c_task_cnt's
 * value is struct c2c_task_value (the counters, then the scheduler's own per-task state); 6: boost
 * inheritance (issue 43 item 3): the flags C2C_F_WAKEE_BOOST and C2C_F_WAKEE_DEPTH2, the counters
 * c2c_stats.boost_inherited and inherit_budget_refused, the per-task inherited_* counters, and 192
 * bytes of the scheduler's per-task state */
#define C2C_ABI_VERSION 6

/* ---- pinning ---------------------------------------------------------------------------- */
#define C2C_PIN_ROOT "/sys/fs/bpf/claim2core"
/* Map names are at most 15 characters (BPF_OBJ_NAME_LEN - 1). */
#define C2C_POLICY_MAP_NAME "c2c_policy"
#define C2C_STATS_MAP_NAME "c2c_stats"
#define C2C_EVENTS_MAP_NAME "c2c_events"
#define C2C_META_MAP_NAME "c2c_meta"
#define C2C_TASK_CNT_MAP_NAME "c2c_task_cnt"
#define C2C_POLICY_PIN C2C_PIN_ROOT "/" C2C_POLICY_MAP_NAME
#define C2C_STATS_PIN C2C_PIN_ROOT "/" C2C_STATS_MAP_NAME
#define C2C_EVENTS_PIN C2C_PIN_ROOT "/" C2C_EVENTS_MAP_NAME
#define C2C_META_PIN C2C_PIN_ROOT "/" C2C_META_MAP_NAME
#define C2C_TASK_CNT_PIN C2C_PIN_ROOT "/" C2C_TASK_CNT_MAP_NAME

#define C2C_POLICY_MAX_ENTRIES 131072u
#define C2C_EVENTS_RINGBUF_BYTES (1u << 20)

/* Which cgroup's id a task record's cgroup_id is (the task programs' rodata c2c_cgroup_id_of, set
 * by user space before load; bpf/task_cgroup_id.bpf.h): the default (v2) hierarchy's, or, on a
 * host with a v1 cpuset hierarchy, the cpuset controller's cgroup (the path user space keys
 * tasks by there). Either is the kernfs id, i.e. the directory's inode number. */
#define C2C_CGROUP_ID_DEFAULT 0u
#define C2C_CGROUP_ID_CPUSET 1u

/* ---- identity --------------------------------------------------------------------------- */
/* USER_HZ = 100: /proc reports start time in 10 ms clock ticks. */
#define C2C_NSEC_PER_TICK 10000000ull

/* ---- CPUs ------------------------------------------------------------------------------- */
/*
 * The scheduler's slice per class when a policy has no custom slice (C2C_F_CUSTOM_SLICE clear).
 * The core writes the same values into entries (bpf/claim2core_abi.hpp checks they agree). Normal
 * tasks get C2C_DEFAULT_SLICE_NS: short, like the kernel's default scheduler, so a task waking behind
 * CPU hogs waits milliseconds, not a 20 ms slice per hog; unmatched tasks too while the policy map
 * holds an entry, and scx_simple's 20 ms on a node without entries (c2c_untracked_slice,
 * bpf/c2c_guards.h).
 */
#define C2C_SLICE_LATENCY_CRITICAL_NS 2000000ull
#define C2C_SLICE_COMM_PROGRESS_NS 1000000ull
#define C2C_SLICE_THROUGHPUT_NS 20000000ull
#define C2C_SLICE_BACKGROUND_NS 10000000ull
#define C2C_DEFAULT_SLICE_NS 3000000ull

#define C2C_MAX_CPUS 256u
#define C2C_CPUMASK_WORDS (C2C_MAX_CPUS / 64u)

/* ---- execution classes ------------------------------------------------------------------ */
enum c2c_exec_class {
	C2C_CLASS_UNMATCHED = 0,         /* no policy: the scheduler's default path */
	C2C_CLASS_LATENCY_CRITICAL = 1,  /* boosted while the lease holds */
	C2C_CLASS_COMM_PROGRESS = 2,     /* communication-progress: boosted, short slice */
	C2C_CLASS_THROUGHPUT = 3,        /* long slice, never boosted */
	C2C_CLASS_BACKGROUND = 4,        /* served after everything else, but never starved */
	C2C_CLASS_NORMAL = 5,            /* slice-only node policy (priority 0) */
	C2C_NR_CLASSES = 6,
};

/* ---- policy map: key and value ---------------------------------------------------------- */
enum c2c_policy_flags {
	C2C_F_BOOST = 1u << 0,          /* priority > 0: boosted until boost_until_ns */
	C2C_F_CUSTOM_SLICE = 1u << 1,   /* slice_ns comes from the policy, not the class default */
	C2C_F_ALLOWED_CPUS = 1u << 2,   /* allowed_cpus is meaningful (else: the task's own mask) */
	C2C_F_PREFERRED_CPUS = 1u << 3, /* preferred_cpus is meaningful */
	C2C_F_INHERITED = 1u << 4,      /* derived from the thread-group leader (TGID strategy) */
	/*
	 * Boost inheritance (issue 43 item 3; opt-in, spec.boost.inherit.depth): a task woken by this
	 * task's boosted run gets a boost of its own for its next run (depth 1); with
	 * C2C_F_WAKEE_DEPTH2 also a task woken by that wakee's inherited run (depth 2). Bounded by
	 * bpf/c2c_guards.h (c2c_inherit_*): never deeper than 2, its own short lease, charged to the
	 * boost budget of the CPU it runs on, on a CPU of the wakee's own allowed CPUs. DEPTH2 without
	 * WAKEE_BOOST means nothing.
	 */
	C2C_F_WAKEE_BOOST = 1u << 5,
	C2C_F_WAKEE_DEPTH2 = 1u << 6,
};

struct c2c_task_key {
	__u32 tid;
};

struct c2c_policy_value {
	__u64 start_ticks;                        /* identity check (INV-2) */
	__u64 generation;                         /* node policy generation (INV-4) */
	__u64 slice_ns;                           /* 0 = class default */
	__u64 boost_until_ns;                     /* CLOCK_BOOTTIME deadline of the boost lease (INV-8) */
	__u64 max_boost_ns;                       /* maxBoostDuration the lease was granted for */
	__u64 allowed_cpus[C2C_CPUMASK_WORDS];    /* always a subset of the cgroup envelope (INV-6) */
	__u64 preferred_cpus[C2C_CPUMASK_WORDS];  /* subset of allowed_cpus */
	__u32 tgid;
	__u16 abi_version;                        /* C2C_ABI_VERSION */
	__u8 exec_class;                          /* enum c2c_exec_class */
	__u8 flags;                               /* enum c2c_policy_flags */
};

/* ---- task records: the task iterator and the event ring buffer --------------------------- */
#define C2C_COMM_LEN 16

enum c2c_task_event_kind {
	C2C_EV_SNAPSHOT = 0, /* emitted by the task iterator */
	C2C_EV_NEW = 1,      /* sched_process_fork / new thread */
	C2C_EV_EXEC = 2,     /* sched_process_exec */
	C2C_EV_EXIT = 3,     /* sched_process_exit */
	C2C_EV_RENAME = 4,   /* task_rename */
};

struct c2c_task_record {
	__u32 kind;        /* enum c2c_task_event_kind */
	__u32 tid;
	__u32 tgid;
	__u32 reserved;    /* C2C_EV_EXEC: the exec'ing thread's former tid (old_pid); C2C_EV_RENAME:
			    * the process title's hash (task_title_hash.h, 0: unknown); else 0 */
	__u64 start_ticks;
	__u64 cgroup_id;   /* cgroup v2 id of the task's default-hierarchy cgroup, 0 if unknown */
	char comm[C2C_COMM_LEN];
};

/* ---- statistics (per-CPU array, one element) --------------------------------------------- */
#define C2C_LAT_BUCKETS 24 /* bucket i counts latencies in [2^i, 2^(i+1)) microseconds; 0 holds < 2 us */

struct c2c_stats {
	__u64 dispatched[C2C_NR_CLASSES];
	__u64 identity_mismatches;  /* entry found but (tid, start_ticks) differs: ignored (INV-2) */
	__u64 migrations;
	__u64 boost_expired;        /* boost lease past its deadline: served unboosted (INV-8) */
	__u64 starvation_rescues;   /* an unboosted task served first because it waited too long */
	__u64 cpumask_rejections;   /* a policy CPU outside p->cpus_ptr was refused (INV-6) */
	__u64 latency_hist[C2C_LAT_BUCKETS];
	__u64 boost_budget_exhausted; /* a live boost refused: the CPU spent its boost budget (INV-8) */
	/*
	 * The run-time oracle: checks of the scheduler's own decisions, computed apart from the
	 * guards (bpf/c2c_guards.h) they watch. Each must stay 0; tests/vm asserts it in every
	 * scenario and a seeded bug in the guards makes one count.
	 */
	__u64 oracle_cpu_outside;     /* a CPU chosen for, or running, a task outside p->cpus_ptr (INV-6) */
	__u64 oracle_stale_identity;  /* a boosted run of a task whose entry is not its own (INV-2) */
	__u64 oracle_past_lease;      /* a boosted task still running 500 ms past its lease (INV-8) */
	/* a task with preferred CPUs started a run outside them (only past C2C_PREFER_SPILL_NS) */
	__u64 preferred_spills;
	/* boost inheritance (issue 43 item 3): runs boosted as a boosted task's wakee ... */
	__u64 boost_inherited;
	/* ... and inherited boosts refused because the CPU had spent its boost budget (INV-8) */
	__u64 inherit_budget_refused;
};

/* ---- per-task counters (TASK_STORAGE map c2c_task_cnt; user space keys it by pidfd) --------- */
/*
 * What the scheduler measured of one task since it first ran under the scheduler: the
 * experiment's device-local CPU time and CPU / NUMA migrations (tests/vm/README.md). Times are
 * CLOCK_BOOTTIME ns of on-CPU time.
 */
#define C2C_MAX_NODES 8 /* node_ns[i]: NUMA node i; nodes >= C2C_MAX_NODES - 1 count in the last */

struct c2c_task_counters {
	__u64 runtime_ns;             /* on-CPU time under the scheduler */
	__u64 preferred_ns;           /* of it, on a CPU of the policy's preferred mask */
	__u64 node_ns[C2C_MAX_NODES]; /* of it, on CPUs of each NUMA node */
	__u64 runs;                   /* runs started */
	__u64 migrations;             /* runs started on another CPU than the previous run */
	__u64 numa_migrations;        /* runs started on another NUMA node than the previous run */
	__u64 spills;                 /* runs of a task with a preference started outside it */
	__u64 inherited_runs;         /* runs boosted as the wakee of a boosted task (boost inheritance) */
	__u32 inherited_from;         /* the waker's tid of the last of them (0: none yet) */
	__u32 inherited_depth;        /* its depth: 1 woken by a task boosted by its own lease, 2 by a wakee */
};

/*
 * The value of c2c_task_cnt: the counters user space reads, then the scheduler's own state of the
 * task, opaque to user space. One task storage for both, so that each scheduler callback looks
 * its task up once (two lookups per context switch fewer, one storage fewer per fork).
 */
#define C2C_TASK_SCHED_BYTES 192u
struct c2c_task_value {
	struct c2c_task_counters counters;
	__u8 sched[C2C_TASK_SCHED_BYTES];
};

/* ---- map set metadata (ARRAY, one element) ---------------------------------------------- */
/*
 * Written by the creator of the pinned map set (src/mirror) so that whoever re-opens the pins
 * (a restarted daemon, the scheduler) can refuse maps laid out for another ABI version: BTF
 * gives sizes and field names, but not the version the layout was made for.
 * abi_version == 0 means "not yet written" (the creator died between pinning and writing it).
 */
struct c2c_meta {
	__u32 abi_version;        /* C2C_ABI_VERSION of the creator */
	__u32 policy_value_size;  /* sizeof(struct c2c_policy_value) of the creator */
	__u32 policy_max_entries; /* max_entries the policy map was created with */
	__u32 reserved;
};

/* ---- layout pins ------------------------------------------------------------------------ */
#ifdef __cplusplus
#define C2C_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define C2C_OFFSETOF(t, m) offsetof(t, m)
#else
#define C2C_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define C2C_OFFSETOF(t, m) __builtin_offsetof(t, m)
#endif

C2C_STATIC_ASSERT(sizeof(struct c2c_task_key) == 4, "task key is a bare u32 tid");
C2C_STATIC_ASSERT(sizeof(struct c2c_policy_value) == 112, "policy value layout changed: bump C2C_ABI_VERSION");
C2C_STATIC_ASSERT(C2C_OFFSETOF(struct c2c_policy_value, start_ticks) == 0, "identity first");
C2C_STATIC_ASSERT(C2C_OFFSETOF(struct c2c_policy_value, allowed_cpus) == 40, "cpumask offset");
C2C_STATIC_ASSERT(C2C_OFFSETOF(struct c2c_policy_value, tgid) == 104, "tgid offset");
C2C_STATIC_ASSERT(sizeof(struct c2c_task_record) == 48, "task record layout changed");
C2C_STATIC_ASSERT(sizeof(struct c2c_meta) == 16, "meta layout changed");
C2C_STATIC_ASSERT(sizeof(struct c2c_stats) == (C2C_NR_CLASSES + 12 + C2C_LAT_BUCKETS) * 8, "stats layout");
C2C_STATIC_ASSERT(sizeof(struct c2c_task_counters) == (8 + C2C_MAX_NODES) * 8, "task counters layout");
C2C_STATIC_ASSERT(sizeof(struct c2c_task_value) == (8 + C2C_MAX_NODES) * 8 + C2C_TASK_SCHED_BYTES, "task value layout");

#endif /* CLAIM2CORE_ABI_H */

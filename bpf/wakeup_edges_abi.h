/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * What bpf/wakeup_edges.bpf.c and its reader (src/host/wakeup_edges.*) share: the activity of a
 * set of threads (issue 46 item 4), i.e. who wakes whom and how each thread runs. Private maps of
 * one reader, never pinned, so this is not part of claim2core_abi.h's versioned ABI; the layout is
 * pinned by the static assertions below all the same.
 */
#ifndef CLAIM2CORE_WAKEUP_EDGES_ABI_H
#define CLAIM2CORE_WAKEUP_EDGES_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Bounds of the maps: a workload's threads, and the edges between them. A full map drops what
 * does not fit and counts it (c2c_we_drops), the reader says so. */
#define C2C_WE_MAX_THREADS 8192u
#define C2C_WE_MAX_EDGES 16384u
#define C2C_WE_MAX_FILTER 1024u /* TGIDs, and cgroup ids, watched */

/* One watched thread, cumulative since the program was attached (the reader takes differences). */
struct c2c_we_thread {
	__u32 tgid;
	__u32 pad;
	__u64 run_ns;      /* on-CPU time: sched_switch in -> out */
	__u64 runs;        /* times switched in */
	__u64 wakeups;     /* times woken (sched_waking, any waker, also interrupts) */
	__u64 wakes_given; /* watched threads this one woke from process context */
	__u64 last_in_ns;  /* bpf_ktime_get_ns() at the last switch-in, 0 while off CPU */
};

/* One waker -> wakee edge between two watched threads (global tids); value: __u64 count. */
struct c2c_we_edge_key {
	__u32 waker;
	__u32 wakee;
};

/* c2c_we_drops[i]: 0 a thread that did not fit, 1 an edge that did not fit. */
#define C2C_WE_DROP_THREAD 0u
#define C2C_WE_DROP_EDGE 1u

#ifdef __cplusplus
static_assert(sizeof(struct c2c_we_thread) == 48, "c2c_we_thread layout");
static_assert(sizeof(struct c2c_we_edge_key) == 8, "c2c_we_edge_key layout");
#else
_Static_assert(sizeof(struct c2c_we_thread) == 48, "c2c_we_thread layout");
_Static_assert(sizeof(struct c2c_we_edge_key) == 8, "c2c_we_edge_key layout");
#endif

#endif

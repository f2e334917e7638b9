/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * Compare before delete (INV-2, INV-3), written once for both places that decide it: the kernel
 * program c2c_compare_delete (policy_maps.bpf.c), which compares and deletes a batch of policy
 * entries in one bpf() call, and the mirror's fallback (src/mirror/applier.cpp), which compares
 * against a read of the map where that program cannot be loaded.
 *
 * The slots are private to one loaded instance of the program and the process that loaded it
 * (its .bss, mapped by src/mirror/policy_compare_delete.cpp); they are not part of the pinned ABI.
 *
 * Included by BPF C (after vmlinux.h) and by C++ (after claim2core_abi.hpp).
 */
#ifndef CLAIM2CORE_POLICY_COMPARE_DELETE_H
#define CLAIM2CORE_POLICY_COMPARE_DELETE_H

enum c2c_delete_verdict {
	C2C_DELETE_OK = 0,         /* the entry holds the expected task, not newer: delete it */
	C2C_DELETE_OTHER_TASK = 1, /* the tid now holds another task (its start differs): keep (INV-2) */
	C2C_DELETE_NEWER = 2,      /* a newer write landed (a higher generation): keep (INV-3) */
	C2C_DELETE_ABSENT = 3,     /* no entry: already gone (only the program reports this) */
};

/* Whether an entry holding (held_start, held_generation) may be deleted by an op that expects
 * (want_start, want_generation). */
static inline int c2c_delete_verdict(__u64 held_start, __u64 held_generation, __u64 want_start,
				     __u64 want_generation)
{
	if (held_start != want_start)
		return C2C_DELETE_OTHER_TASK;
	if (held_generation > want_generation)
		return C2C_DELETE_NEWER;
	return C2C_DELETE_OK;
}

/*
 * One key of a compare-and-delete batch. In: tid and the expected start_ticks and generation.
 * Out: verdict (enum c2c_delete_verdict, or -errno of a delete that failed) and, for a kept entry,
 * the start_ticks and generation it holds (for the reason the mirror reports).
 */
struct c2c_compare_delete_slot {
	__u32 tid;
	__s32 verdict;
	__u64 start_ticks;
	__u64 generation;
};

/* Keys per run of the program: its .bss holds this many slots (192 KiB). */
#define C2C_COMPARE_DELETE_SLOTS 8192u

/* The program's context (BPF_PROG_TEST_RUN's ctx_in): how many slots to process. */
struct c2c_compare_delete_args {
	__u32 count;
	__u32 reserved;
};

#endif /* CLAIM2CORE_POLICY_COMPARE_DELETE_H */

// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * The pinned policy map set that src/mirror creates and pins, and that the sched_ext scheduler
 * re-uses by pin path, and the one program that works on it from user space (c2c_compare_delete,
 * below; src/mirror loads it with the policy map's fd). The maps are defined in BPF C
 * (rather than created with bpf_map_create) so that they carry BTF: `bpftool map dump pinned
 * /sys/fs/bpf/claim2core/c2c_policy` then prints named fields.
 *
 * Pin paths are set by user space (src/mirror/pinned_maps.cpp) so that the pin root can be
 * overridden; do not add LIBBPF_PIN_BY_NAME here. A consumer defining the same maps must use the
 * same type, key, value, max_entries and flags (0: preallocated), or libbpf refuses the pin.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "claim2core_abi.h"
#include "policy_compare_delete.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "policy_maps.bpf.h"
#include "events_ringbuf.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct c2c_meta);
} c2c_meta SEC(".maps");

/*
 * Compare-and-delete of a batch of policy entries (INV-2, INV-3), run by user space through
 * BPF_PROG_TEST_RUN (src/mirror/policy_compare_delete.cpp): each slot's entry is deleted only if
 * it still holds the task the mirror expects, not written at a newer generation
 * (c2c_delete_verdict); otherwise it is kept and the slot says what it holds. One bpf() call
 * compares and deletes up to C2C_COMPARE_DELETE_SLOTS keys, where the mirror without it read the
 * whole map first (a lookup_batch pass of every entry: ~30 ms at 100k) to compare against, and the
 * window between that read and the delete shrinks from the whole pass to one key's lookup.
 */
struct c2c_compare_delete_slot c2c_cd_slots[C2C_COMPARE_DELETE_SLOTS];

static long compare_delete_one(__u64 i, void *unused)
{
	struct c2c_compare_delete_slot *s;
	struct c2c_policy_value *v;
	struct c2c_task_key key;
	int verdict;

	if (i >= C2C_COMPARE_DELETE_SLOTS)
		return 1;
	s = &c2c_cd_slots[i];
	key.tid = s->tid;
	v = bpf_map_lookup_elem(&c2c_policy, &key);
	if (!v) {
		s->verdict = C2C_DELETE_ABSENT;
		return 0;
	}
	verdict = c2c_delete_verdict(v->start_ticks, v->generation, s->start_ticks, s->generation);
	if (verdict != C2C_DELETE_OK) {
		s->verdict = verdict;
		s->start_ticks = v->start_ticks;
		s->generation = v->generation;
		return 0;
	}
	s->verdict = (__s32)bpf_map_delete_elem(&c2c_policy, &key);
	return 0;
}

SEC("syscall")
int c2c_compare_delete(struct c2c_compare_delete_args *args)
{
	__u32 count = args->count;

	if (count > C2C_COMPARE_DELETE_SLOTS)
		return -1;
	return bpf_loop(count, compare_delete_one, NULL, 0);
}

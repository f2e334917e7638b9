/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * The pinned maps that the mirror (policy_maps.bpf.c) and the scheduler (claim2core.bpf.c) both
 * define. Pin reuse needs identical type, key, value, max_entries and flags, so both include this
 * one definition. Include after vmlinux.h, bpf_helpers.h and claim2core_abi.h.
 */
#ifndef CLAIM2CORE_POLICY_MAPS_BPF_H
#define CLAIM2CORE_POLICY_MAPS_BPF_H

/* Per-task policy: tid -> value; a consumer uses an entry only if start_ticks matches (INV-2). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, C2C_POLICY_MAX_ENTRIES);
	__type(key, struct c2c_task_key);
	__type(value, struct c2c_policy_value);
} c2c_policy SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct c2c_stats);
} c2c_stats SEC(".maps");

#endif /* CLAIM2CORE_POLICY_MAPS_BPF_H */

// SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0)
/*
 * Map definitions only: the pinned policy map set that src/mirror creates and pins, and that the
 * sched_ext scheduler re-uses by pin path. No programs live here. The maps are defined in BPF C
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

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "policy_maps.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, C2C_EVENTS_RINGBUF_BYTES);
} c2c_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct c2c_meta);
} c2c_meta SEC(".maps");

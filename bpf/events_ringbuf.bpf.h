/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * The task-event ring buffer (C2C_EVENTS_MAP_NAME): written by task_events.bpf.c (src/host), created
 * and pinned with the policy maps by policy_maps.bpf.c (src/mirror), which the task-event stream
 * then reuses by pin. Pin reuse needs identical type, max_entries and flags, so both include this
 * one definition. User space may size it (PinOptions::events_ringbuf_bytes) before load.
 * Include after vmlinux.h, bpf_helpers.h and claim2core_abi.h.
 */
#ifndef CLAIM2CORE_EVENTS_RINGBUF_BPF_H
#define CLAIM2CORE_EVENTS_RINGBUF_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, C2C_EVENTS_RINGBUF_BYTES);
} c2c_events SEC(".maps");

#endif /* CLAIM2CORE_EVENTS_RINGBUF_BPF_H */

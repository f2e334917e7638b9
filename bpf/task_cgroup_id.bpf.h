/* SPDX-License-Identifier: (GPL-2.0-only OR Apache-2.0) */
/*
 * The cgroup id a task record carries (C2C_CGROUP_ID_* in claim2core_abi.h), so that user space
 * maps it to the task's cgroup path once (src/host/cgroup_resolver.hpp) instead of reading
 * /proc/<tgid>/task/<tid>/cgroup for every task. Shared by the iterator and the event programs.
 */
#pragma once

/* Set before load (rodata: the verifier drops the branch not taken). */
const volatile __u32 c2c_cgroup_id_of = C2C_CGROUP_ID_DEFAULT;

static __always_inline __u64 c2c_task_cgroup_id(struct task_struct *task)
{
	if (c2c_cgroup_id_of == C2C_CGROUP_ID_CPUSET) {
		struct cgroup_subsys_state *css = NULL;
		struct css_set *cs = BPF_CORE_READ(task, cgroups);
		const int idx = bpf_core_enum_value(enum cgroup_subsys_id, cpuset_cgrp_id);

		if (!cs || idx < 0 || idx >= 16)
			return 0;
		if (bpf_core_read(&css, sizeof(css), &cs->subsys[idx]) || !css)
			return 0;
		return BPF_CORE_READ(css, cgroup, kn, id);
	}
	return BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
}

// The `syncwake` scenario: a boosted task woken by a sync wakeup (a pipe's reader woken by its
// writer, as a socket's) preempts the writer on the writer's CPU, where an unboosted one waits
// for the writer's slice to end. scx_bpf_select_cpu_dfl sends a sync wakeup to the waker's own
// busy CPU when another CPU is idle and the waker's local queue is empty, and reports it as idle:
// a scheduler that dispatches a boosted task there without SCX_ENQ_PREEMPT leaves it behind the
// waker (the regression of commit f832607, seeded as a mutant in tests/mutants/scheduler.tsv).
#pragma once

namespace c2c::vm {

// The writer spins on `cpu` with a 20 ms slice and writes a timestamp every 5 ms; the reader (any
// CPU) records how long each took to reach it, once without a policy (the control: it must wait,
// or the wakeup never reached the waker's CPU and nothing was tested) and once boosted. Prints one
// JSON line; 0 pass (control p50 >= 2 ms, boosted p50 <= 1 ms), 1 fail.
int cmd_sync_wakeup(int cpu, int rounds);

}  // namespace c2c::vm

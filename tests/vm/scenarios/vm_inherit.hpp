// The `inherit` scenario (issue 43 item 3): boost inheritance on a real kernel. A boosted writer
// wakes a reader that has an entry of its own (class normal, no boost) through a pipe; the reader
// inherits a boost only when the writer's entry opted in (C2C_F_WAKEE_BOOST), and its per-task
// counters (what `claim2core explain` reads) name the writer.
#pragma once

namespace c2c::vm {

// Two series of `rounds` writes, the writer pinned to `cpu`, boosted by its own 60 s lease: once
// without the opt-in (the control: the reader must inherit nothing) and once with depth 1 (the
// reader's inherited_runs > 0, inherited_from = the writer's tid, inherited_depth = 1). Prints one
// JSON line; 0 pass, 1 fail.
int cmd_inherit(int cpu, int rounds);

}  // namespace c2c::vm

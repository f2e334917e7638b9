#pragma once

#include <CLI/CLI.hpp>

namespace c2c::cli {

// `claim2core replay TRACE.jsonl [--format json|table]`: exit 0 when every invariant holds,
// 1 on a violation (naming the invariant and the step), 2 on malformed input (line and field).
void add_replay_command(CLI::App& app, int& exit_code);

}  // namespace c2c::cli

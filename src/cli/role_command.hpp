// `claim2core role set|clear`: registers the role of threads with claim2cored over the role
// socket (clients/c/claim2core_role.h, the same code a workload includes). The CLI is a process
// of its own, so it names the threads: --tid (one thread) or --pid (every thread of a process
// now). Exit status: 0 ok; 1 the daemon refused (its code: PERMISSION_DENIED, NOT_FOUND, ...) or
// is not reachable; 2 usage.
#pragma once

#include <CLI/CLI.hpp>

namespace c2c::cli {

void add_role_command(CLI::App& app, int& exit_code);

}  // namespace c2c::cli

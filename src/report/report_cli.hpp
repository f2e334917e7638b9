// Registers `claim2core report INPUT [--out DIR] [--format text|json]` on the CLI.
// Exit status: 0 every check holds after every step (nothing to report), 1 a failure was
// reproduced and reported, 2 the input cannot be read or is a malformed trace.
#pragma once

#include <CLI/CLI.hpp>

namespace c2c::report {

void add_cli(CLI::App& app, int& exit_code);

}  // namespace c2c::report

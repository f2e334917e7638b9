// `claim2core completion bash|zsh`: shell completion scripts generated from the command tree
// itself (subcommands and options of every level), so they never drift from the CLI.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace c2c::cli {

// The script for `shell` ("bash" or "zsh") completing `program` from `root`'s command tree.
std::string completion_script(const CLI::App& root, const std::string& program, const std::string& shell);

// Registers `completion <shell>` on `app` (prints the script to stdout).
void add_completion_command(CLI::App& app);

}  // namespace c2c::cli

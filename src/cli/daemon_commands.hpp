// The verbs that talk to claim2cored over gRPC: apply, delete, preview, get, explain, status,
// watch. Exit status: 0 ok; 1 an RPC or server error (the gRPC status code and the daemon's
// message), a Failed intent, explain of a TID without an entry; 2 usage or invalid input
// (local manifest errors name the file, the document and the field, and nothing is sent; the
// daemon's INVALID_ARGUMENT names the field).
#pragma once

#include <CLI/CLI.hpp>

namespace c2c::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitServer = 1;
inline constexpr int kExitUsage = 2;

void add_daemon_commands(CLI::App& app, int& exit_code);

}  // namespace c2c::cli

// claim2core: the command-line entry point. Each part of the product registers its subcommands.
#include <CLI/CLI.hpp>

#include "c2c_version.hpp"
#include "cli/completion.hpp"
#include "cli/replay_command.hpp"
#include "cli/role_command.hpp"
#ifdef C2C_HAVE_DAEMON_CLIENT
#include "cli/daemon_commands.hpp"
#endif
#ifdef C2C_HAVE_K8S
#include "k8s/cli.hpp"
#endif
#ifdef C2C_HAVE_REPORT
#include "report/report_cli.hpp"
#endif

int main(int argc, char** argv) {
  CLI::App app{"claim2core: from DRA claims to per-task scheduling policy, verified"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("claim2core ") + c2c::kVersionString);
  app.footer(
      "Exit status: 0 ok; 1 an RPC or server error (gRPC status code and the daemon's message), a Failed\n"
      "intent, explain of a TID without an entry, or an invariant violation (replay); 2 usage or invalid\n"
      "input (manifest errors name the file, the document (from 1) and the field, and nothing is sent).\n"
      "The daemon verbs connect to --socket (default $CLAIM2CORE_SOCKET, else\n"
      "/run/claim2core/claim2cored.sock) or to --server HOST:PORT with --cacert, --cert and --key (mTLS).");
  int exit_code = 0;
#ifdef C2C_HAVE_DAEMON_CLIENT
  c2c::cli::add_daemon_commands(app, exit_code);
#endif
  c2c::cli::add_replay_command(app, exit_code);
  c2c::cli::add_role_command(app, exit_code);
#ifdef C2C_HAVE_K8S
  c2c::k8s::add_cli(app);
#endif
#ifdef C2C_HAVE_REPORT
  c2c::report::add_cli(app, exit_code);  // src/report; linked in by src/cli/CMakeLists.txt
#endif
  c2c::cli::add_completion_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}

// claim2core: the command-line entry point. Each part of the product registers its subcommands.
#include <CLI/CLI.hpp>

#include "cli/replay_command.hpp"
#ifdef C2C_HAVE_K8S
#include "k8s/cli.hpp"
#endif
#ifdef C2C_HAVE_REPORT
#include "report/report_cli.hpp"
#endif

int main(int argc, char** argv) {
  CLI::App app{"claim2core: from DRA claims to per-task scheduling policy, verified"};
  app.require_subcommand(1);
  int exit_code = 0;
  c2c::cli::add_replay_command(app, exit_code);
#ifdef C2C_HAVE_K8S
  c2c::k8s::add_cli(app);
#endif
#ifdef C2C_HAVE_REPORT
  c2c::report::add_cli(app, exit_code);  // fuzz/report; linked in by fuzz/report/CMakeLists.txt
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return exit_code;
}

// c2c-report: `claim2core report` as a standalone binary, so that the fuzz part's regression
// checks run even in a build without src/cli.
#include <CLI/CLI.hpp>

#include "report/report_cli.hpp"

int main(int argc, char** argv) {
  CLI::App app{"c2c-report: explain a failing fuzz input or trace"};
  app.require_subcommand(1);
  int exit_code = 0;
  c2c::report::add_cli(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
}

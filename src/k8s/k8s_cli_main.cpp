// A stand-alone front end for the k8s subcommands until src/cli wires add_cli into claim2core.
#include <CLI/CLI.hpp>

#include "k8s/cli.hpp"

int main(int argc, char** argv) {
  CLI::App app{"claim2core-k8s: Kubernetes DRA tools"};
  app.require_subcommand(1);
  c2c::k8s::add_cli(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}

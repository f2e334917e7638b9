// `k8s` subcommands for the claim2core CLI (CLI11).
#pragma once

namespace CLI {
class App;
}

namespace c2c::k8s {

// Registers `k8s bindings -f FILE_OR_DIR... [--node NAME] [-o json|table]`.
void add_cli(CLI::App& app);

}  // namespace c2c::k8s

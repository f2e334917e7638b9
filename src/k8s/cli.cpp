#include "k8s/cli.hpp"

#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "k8s/bindings.hpp"
#include "k8s/decode.hpp"

namespace c2c::k8s {

namespace {

struct BindingsArgs {
  std::vector<std::string> files;
  std::string node;
  std::string output = "table";
};

int run_bindings(const BindingsArgs& a) {
  Decoded all;
  for (const auto& f : a.files) all.append(decode_path(f));
  Inventory inv = Inventory::build(all.slices);
  BindingOptions opt;
  opt.node = a.node;
  BindingSet set = compute_bindings(all.claims, inv, all.pods, opt);
  if (a.output == "json") {
    nlohmann::json out = {{"bindings", nlohmann::json::array()}, {"warnings", set.warnings},
                          {"refused", nlohmann::json::array()}};
    for (const auto& b : set.bindings) out["bindings"].push_back(to_json(b));
    for (const auto& r : all.refused)
      out["refused"].push_back({{"source", r.source}, {"object", r.object}, {"field", r.field}, {"message", r.message}});
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << to_table(set.bindings);
    for (const auto& b : set.bindings)
      for (const auto& w : b.warnings)
        std::cerr << "warning: claim " << b.claim_namespace << "/" << b.claim_name << ": " << w << "\n";
    for (const auto& w : set.warnings) std::cerr << "warning: " << w << "\n";
    for (const auto& r : all.refused) std::cerr << "refused: " << r.to_string() << "\n";
  }
  return 0;
}

}  // namespace

void add_cli(CLI::App& app) {
  CLI::App* k8s = app.add_subcommand("k8s", "Kubernetes DRA objects (resource.k8s.io/v1)");
  k8s->require_subcommand(1);
  auto args = std::make_shared<BindingsArgs>();
  CLI::App* b = k8s->add_subcommand("bindings", "Claim-device bindings from kubectl -o yaml|json output");
  b->add_option("-f,--filename", args->files, "files or directories of ResourceClaims, ResourceSlices, Pods")
      ->required()
      ->check(CLI::ExistingPath);
  b->add_option("--node", args->node, "only allocations usable on this node");
  b->add_option("-o,--output", args->output, "json or table")->check(CLI::IsMember({"json", "table"}));
  b->callback([args] {
    int rc = run_bindings(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace c2c::k8s

// claim2core-observer: prints binding changes for one node as JSON lines on stdout.
#include <csignal>
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "k8s/observer.hpp"

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop = true; }

class JsonLines : public c2c::k8s::BindingListener {
 public:
  void on_bindings_changed(const std::vector<c2c::k8s::ClaimDeviceBinding>& added,
                           const std::vector<c2c::k8s::ClaimDeviceBinding>& removed) override {
    nlohmann::json line = {{"added", nlohmann::json::array()}, {"removed", nlohmann::json::array()}};
    for (const auto& b : added) line["added"].push_back(c2c::k8s::to_json(b));
    for (const auto& b : removed) line["removed"].push_back(c2c::k8s::to_json(b));
    std::cout << line.dump() << std::endl;  // flushed: a consumer reads line by line
  }
  void on_notice(const std::string& kind, const std::string& message) override {
    std::cerr << nlohmann::json{{"notice", kind}, {"message", message}}.dump() << std::endl;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"claim2core-observer: ResourceClaim/ResourceSlice/Pod list+watch -> binding changes (JSON lines)"};
  std::string node = std::getenv("NODE_NAME") ? std::getenv("NODE_NAME") : "";
  std::string kubeconfig = std::getenv("KUBECONFIG") ? std::getenv("KUBECONFIG") : "";
  std::string context;
  std::string server_override;
  long watch_timeout = 300;
  long page_size = 500;
  app.add_option("--node", node, "this node's name (default: $NODE_NAME)");
  app.add_option("--kubeconfig", kubeconfig, "kubeconfig file (default: $KUBECONFIG, else in-cluster config)");
  app.add_option("--context", context, "kubeconfig context (default: current-context)");
  app.add_option("--server", server_override, "API server URL, overriding the config (e.g. http://127.0.0.1:8080)");
  app.add_option("--watch-timeout", watch_timeout, "seconds per watch request")->check(CLI::Range(1L, 3600L));
  app.add_option("--page-size", page_size, "list page size (limit=)")->check(CLI::Range(1L, 10000L));
  CLI11_PARSE(app, argc, argv);
  if (node.empty()) {
    std::cerr << "claim2core-observer: --node (or NODE_NAME) is required\n";
    return 2;
  }
  std::string err;
  std::optional<c2c::k8s::KubeConfig> cfg;
  if (!kubeconfig.empty()) cfg = c2c::k8s::kubeconfig_from_file(kubeconfig, context, &err);
  else if (!server_override.empty()) cfg = c2c::k8s::KubeConfig{};
  else cfg = c2c::k8s::in_cluster_config(&err);
  if (!cfg) {
    std::cerr << "claim2core-observer: " << err << "\n";
    return 2;
  }
  if (!server_override.empty()) cfg->server = server_override;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  JsonLines out;
  c2c::k8s::ObserverOptions opt;
  opt.node = node;
  opt.watch_timeout_s = watch_timeout;
  opt.list_page_size = page_size;
  c2c::k8s::Observer observer(*cfg, opt, out);
  observer.run(g_stop);
  return 0;
}

// claim2core-observer: prints binding changes for one node as JSON lines on stdout; with
// --daemon-socket it also feeds them, and the two policy CRDs, to claim2cored.
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#include <CLI/CLI.hpp>

#include "c2c_version.hpp"
#include "k8s/observer.hpp"
#if C2C_OBSERVER_FEED
#include "k8s/feed.hpp"
#include "k8s/status_writer.hpp"
#endif

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
    std::lock_guard<std::mutex> l(mu_);
    std::cout << line.dump() << std::endl;  // flushed: a consumer reads line by line
  }
  void on_notice(const std::string& kind, const std::string& message) override {
    std::lock_guard<std::mutex> l(mu_);  // the watch loops and the feed's sender all report here
    std::cerr << nlohmann::json{{"notice", kind}, {"message", message}}.dump() << std::endl;
  }

 private:
  std::mutex mu_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"claim2core-observer: ResourceClaim/ResourceSlice/Pod list+watch -> binding changes (JSON lines)"};
  app.set_version_flag("--version", std::string("claim2core-observer ") + c2c::kVersionString);
  std::string node = std::getenv("NODE_NAME") ? std::getenv("NODE_NAME") : "";
  std::string kubeconfig = std::getenv("KUBECONFIG") ? std::getenv("KUBECONFIG") : "";
  std::string context;
  std::string server_override;
  std::string daemon_socket;
  [[maybe_unused]] bool no_policies = false;
  [[maybe_unused]] bool no_node_labels = false;
  long watch_timeout = 300;
  long page_size = 500;
  int retry_ms = 500;
  [[maybe_unused]] int max_backoff_ms = 5000;
  [[maybe_unused]] bool write_status = false;
  [[maybe_unused]] int status_interval_ms = 2000;
  [[maybe_unused]] int status_resync_s = 60;
  app.add_option("--node", node, "this node's name (default: $NODE_NAME)");
  app.add_option("--kubeconfig", kubeconfig, "kubeconfig file (default: $KUBECONFIG, else in-cluster config)");
  app.add_option("--context", context, "kubeconfig context (default: current-context)");
  app.add_option("--server", server_override, "API server URL, overriding the config (e.g. http://127.0.0.1:8080)");
  app.add_option("--watch-timeout", watch_timeout, "seconds per watch request")->check(CLI::Range(1L, 3600L));
  app.add_option("--page-size", page_size, "list page size (limit=)")->check(CLI::Range(1L, 10000L));
  app.add_option("--retry-backoff-ms", retry_ms, "wait after a failed API request; first wait after a failed daemon call")
      ->check(CLI::Range(10, 60000));
#if C2C_OBSERVER_FEED
  app.add_option("--daemon-socket", daemon_socket,
                 "feed claim2cored on this Unix socket (e.g. /run/claim2core/claim2cored.sock): bindings as "
                 "UpsertClaimBinding/DeleteClaimBinding, the policy CRDs as UpsertPolicy/DeletePolicy");
  app.add_flag("--no-policies", no_policies, "with --daemon-socket: do not watch the two policy CRDs");
  app.add_flag("--no-node-labels", no_node_labels,
               "with --daemon-socket: do not watch this node's Node object (its labels: SetNodeLabels)");
  app.add_option("--max-backoff-ms", max_backoff_ms, "cap of the doubling retry wait for daemon calls")
      ->check(CLI::Range(10, 600000));
  app.add_flag("--write-status", write_status,
               "with --daemon-socket: write this node's entry (the daemon's intents) into status.nodes[] of the "
               "policy CRDs (PATCH on */status) and remove entries of departed nodes");
  app.add_option("--status-interval-ms", status_interval_ms, "with --write-status: how often the daemon's intents are read")
      ->check(CLI::Range(50, 600000));
  app.add_option("--status-resync-s", status_resync_s, "with --write-status: re-read every policy object this often")
      ->check(CLI::Range(1, 86400));
#endif
  CLI11_PARSE(app, argc, argv);
  if (node.empty()) {
    std::cerr << "claim2core-observer: --node (or NODE_NAME) is required\n";
    return 2;
  }
  std::string err;
  std::optional<c2c::k8s::KubeConfig> cfg =
      c2c::k8s::resolve_kube_config(kubeconfig, context, server_override, /*home_default=*/false, &err);
  if (!cfg) {
    std::cerr << "claim2core-observer: " << err << "\n";
    return 2;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  JsonLines out;
  c2c::k8s::ObserverOptions opt;
  opt.node = node;
  opt.watch_timeout_s = watch_timeout;
  opt.list_page_size = page_size;
  opt.retry_backoff_ms = retry_ms;
  if (daemon_socket.empty()) {
    c2c::k8s::Observer observer(*cfg, opt, out);
    observer.run(g_stop);
    return 0;
  }
#if C2C_OBSERVER_FEED
  c2c::k8s::GrpcFeedTransport transport(daemon_socket);
  c2c::k8s::FeedSenderOptions so;
  so.initial_backoff = std::chrono::milliseconds(retry_ms);
  so.max_backoff = std::chrono::milliseconds(std::max(max_backoff_ms, retry_ms));
  c2c::k8s::FeedSender sender(transport, so, [&out](const std::string& k, const std::string& m) {
    out.on_notice("daemon " + k, m);
  });
  c2c::k8s::DaemonFeed feed(sender, &out);
  std::thread sending([&] { sender.run(g_stop); });
  std::thread policies;
  c2c::k8s::PolicyWatch watch(*cfg, {watch_timeout, page_size, retry_ms}, feed);
  if (!no_policies) policies = std::thread([&] { watch.run(g_stop); });
  std::thread status;
  c2c::k8s::StatusWriterOptions wo;
  wo.node = node;
  wo.interval = std::chrono::milliseconds(status_interval_ms);
  wo.resync = std::chrono::seconds(status_resync_s);
  wo.node_watch = {watch_timeout, page_size, retry_ms};
  c2c::k8s::StatusWriter writer(*cfg, wo, transport, [&out](const std::string& k, const std::string& m) {
    out.on_notice(k, m);
  });
  if (write_status) status = std::thread([&] { writer.run(g_stop); });
  std::thread node_labels;
  c2c::k8s::NodeWatch node_watch(*cfg, {watch_timeout, page_size, retry_ms}, node, feed);
  if (!no_node_labels) node_labels = std::thread([&] { node_watch.run(g_stop); });
  c2c::k8s::Observer observer(*cfg, opt, feed);
  observer.run(g_stop);
  if (status.joinable()) status.join();
  if (policies.joinable()) policies.join();
  if (node_labels.joinable()) node_labels.join();
  sending.join();
#endif
  return 0;
}

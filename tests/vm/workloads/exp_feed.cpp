// c2c-exp-feed: the experiment's "allocation on". Feeds DRA v1 objects from files (ResourceClaims
// with status.allocation, ResourceSlices, Pods) into claim2cored exactly the way the observer's
// feed does, minus the HTTP list+watch: the observer's BindingCache (decode, node filter,
// bindings), its DaemonFeed and ClaimFeedPlanner (one UpsertClaimBinding per claim, with PodInfo)
// and its FeedSender over gRPC. Exits 0 once everything was delivered, 1 when the daemon refused a
// claim (the daemon's field is printed), 2 on bad input or a timeout.
//
//   c2c-exp-feed --socket PATH --node NAME [--timeout-ms N] FILE...
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "k8s/feed.hpp"
#include "k8s/feed_sender.hpp"
#include "k8s/observer.hpp"
#include "codec/yaml_json.hpp"

namespace {

using c2c::k8s::BindingCache;

// The observer's own JSON-lines listener is not needed: notices go to stderr.
class StderrListener : public c2c::k8s::BindingListener {
 public:
  void on_bindings_changed(const std::vector<c2c::k8s::ClaimDeviceBinding>& added,
                           const std::vector<c2c::k8s::ClaimDeviceBinding>& removed) override {
    std::cerr << "exp-feed: " << added.size() << " bindings added, " << removed.size() << " removed\n";
  }
  void on_notice(const std::string& kind, const std::string& message) override {
    std::cerr << "exp-feed " << kind << ": " << message << "\n";
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"feed DRA v1 objects from files into claim2cored the way the observer does"};
  std::string socket, node;
  std::vector<std::string> files;
  int timeout_ms = 30000;
  app.add_option("--socket", socket, "claim2cored's Unix socket")->required();
  app.add_option("--node", node, "this node's name (the observer's --node)")->required();
  app.add_option("--timeout-ms", timeout_ms)->capture_default_str();
  app.add_option("files", files, "YAML/JSON files with ResourceClaims, ResourceSlices and Pods")->required();
  CLI11_PARSE(app, argc, argv);

  std::vector<nlohmann::json> by_kind[BindingCache::kResources];
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) {
      std::cerr << "exp-feed: cannot read " << f << "\n";
      return 2;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    std::vector<nlohmann::json> docs;
    try {
      docs = c2c::codec::yaml_to_json(ss.str());
    } catch (const std::exception& e) {
      std::cerr << "exp-feed: " << f << ": " << e.what() << "\n";
      return 2;
    }
    for (auto& d : docs) {
      const std::string kind = d.value("kind", "");
      if (kind == "ResourceClaim") by_kind[0].push_back(d);
      else if (kind == "ResourceSlice") by_kind[1].push_back(d);
      else if (kind == "Pod") by_kind[2].push_back(d);
      else {
        std::cerr << "exp-feed: " << f << ": field kind: " << (kind.empty() ? "missing" : kind)
                  << " is not ResourceClaim, ResourceSlice or Pod\n";
        return 2;
      }
    }
  }

  c2c::k8s::GrpcFeedTransport transport(socket);
  c2c::k8s::FeedSender sender(transport, {}, [](const std::string& k, const std::string& m) {
    std::cerr << "exp-feed daemon " << k << ": " << m << "\n";
  });
  StderrListener out;
  c2c::k8s::DaemonFeed feed(sender, &out);
  std::atomic<bool> stop{false};
  std::thread sending([&] { sender.run(stop); });
  {
    // As the observer lists them: claims, slices, then this node's pods (a field-selected list).
    BindingCache cache(feed, c2c::k8s::BindingOptions{node, std::nullopt, /*pods_complete=*/true});
    cache.replace(BindingCache::Resource::Claims, by_kind[0], "files");
    cache.replace(BindingCache::Resource::Slices, by_kind[1], "files");
    cache.replace(BindingCache::Resource::Pods, by_kind[2], "files");
    sender.wake();
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while ((sender.pending() > 0 || sender.stats().sent.load() == 0) && sender.stats().refused.load() == 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop = true;
  sender.wake();
  sending.join();
  const auto& st = sender.stats();
  std::cout << "{\"sent\":" << st.sent.load() << ",\"ignored\":" << st.ignored.load() << ",\"refused\":"
            << st.refused.load() << ",\"pending\":" << sender.pending() << "}" << std::endl;
  if (st.refused.load() > 0) return 1;
  return sender.pending() == 0 && st.sent.load() > 0 ? 0 : 2;
}

// Figures for the k8s adapter, side by side in one run:
//  * decoding the same N claims from YAML vs from JSON (what `kubectl -o yaml` costs over -o json);
//  * compute_bindings over N allocated claims with their slices;
//  * the observer's cost of one watch event (it recomputes all bindings from the cache and diffs)
//    vs a full relist of the same N claims, i.e. the price of the simple recompute-everything design.
#include <benchmark/benchmark.h>

#include "k8s/bindings.hpp"
#include "k8s/decode.hpp"
#include "k8s/observer.hpp"

namespace {

using nlohmann::json;
using namespace c2c::k8s;

json claim_json(int i) {
  std::string id = std::to_string(i);
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", "claim-" + id}, {"namespace", "bench"}, {"uid", "uid-" + id}, {"resourceVersion", id}}},
          {"spec", {{"devices", {{"requests", {{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu.example.com"}}}}}}}}}},
          {"status",
           {{"allocation",
             {{"devices",
               {{"results",
                 {{{"request", "gpu"}, {"driver", "gpu.example.com"}, {"pool", "node-" + std::to_string(i % 50)},
                   {"device", "gpu-" + std::to_string(i % 8)}, {"shareID", "share-" + id}}}}}},
              {"nodeSelector",
               {{"nodeSelectorTerms",
                 {{{"matchFields", {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {"node-" + std::to_string(i % 50)}}}}}}}}}}}},
            {"reservedFor", {{{"resource", "pods"}, {"name", "pod-" + id}, {"uid", "pod-uid-" + id}}}}}}};
}

json slice_json(int node) {
  json devices = json::array();
  for (int g = 0; g < 8; ++g)
    devices.push_back({{"name", "gpu-" + std::to_string(g)},
                       {"attributes", {{"numaNodeID", {{"int", g / 4}}}, {"resource.kubernetes.io/pcieRoot", {{"string", "pci0000:" + std::to_string(g)}}}}}});
  std::string n = "node-" + std::to_string(node);
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", n + "-gpus"}}},
          {"spec", {{"driver", "gpu.example.com"}, {"nodeName", n}, {"pool", {{"name", n}, {"generation", 1}, {"resourceSliceCount", 1}}}, {"devices", devices}}}};
}

json claim_list(int n) {
  json items = json::array();
  for (int i = 0; i < n; ++i) items.push_back(claim_json(i));
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
}

// JSON is valid YAML flow style, but that would flatter YAML: emit block style like kubectl.
void to_block_yaml(const json& j, int indent, std::string& out) {
  std::string pad(static_cast<size_t>(indent), ' ');
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      out += pad + it.key() + ":";
      if (it->is_structured() && !it->empty()) {
        out += "\n";
        to_block_yaml(*it, indent + 2, out);
      } else {
        out += " " + (it->is_string() ? "\"" + it->get<std::string>() + "\"" : it->dump()) + "\n";
      }
    }
  } else if (j.is_array()) {
    for (const auto& e : j) {
      if (e.is_structured()) {
        std::string sub;
        to_block_yaml(e, indent + 2, sub);
        out += pad + "- " + sub.substr(static_cast<size_t>(indent) + 2);
      } else {
        out += pad + "- " + (e.is_string() ? "\"" + e.get<std::string>() + "\"" : e.dump()) + "\n";
      }
    }
  }
}

void BM_DecodeClaimsJson(benchmark::State& st) {
  std::string text = claim_list(static_cast<int>(st.range(0))).dump(2);
  for (auto _ : st) benchmark::DoNotOptimize(decode_text(text, "bench"));
  st.SetItemsProcessed(st.iterations() * st.range(0));
  st.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_DecodeClaimsJson)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_DecodeClaimsYaml(benchmark::State& st) {
  std::string text;
  to_block_yaml(claim_list(static_cast<int>(st.range(0))), 0, text);
  if (decode_text(text, "bench").claims.size() != static_cast<size_t>(st.range(0))) st.SkipWithError("YAML did not round-trip");
  for (auto _ : st) benchmark::DoNotOptimize(decode_text(text, "bench"));
  st.SetItemsProcessed(st.iterations() * st.range(0));
  st.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_DecodeClaimsYaml)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_ComputeBindings(benchmark::State& st) {
  Decoded d = decode_text(claim_list(static_cast<int>(st.range(0))).dump(), "bench");
  for (int n = 0; n < 50; ++n) decode_object(slice_json(n), "bench", d);
  for (auto _ : st) {
    Inventory inv = Inventory::build(d.slices);
    benchmark::DoNotOptimize(compute_bindings(d.claims, inv, d.pods, {}));
  }
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_ComputeBindings)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

struct NullListener : BindingListener {
  size_t changes = 0;
  void on_bindings_changed(const std::vector<ClaimDeviceBinding>& a, const std::vector<ClaimDeviceBinding>& r) override {
    changes += a.size() + r.size();
  }
};

// range(1) == 1: the observer runs for node-0 and keeps only that node's claims and slices.
void BM_ObserverOneWatchEvent(benchmark::State& st) {
  NullListener l;
  BindingCache cache(l, BindingOptions{st.range(1) ? "node-0" : "", std::nullopt, false});
  std::vector<json> claims;
  for (int i = 0; i < st.range(0); ++i) claims.push_back(claim_json(i));
  std::vector<json> slices;
  for (int n = 0; n < 50; ++n) slices.push_back(slice_json(n));
  cache.replace(BindingCache::Resource::Pods, {}, "bench");
  cache.replace(BindingCache::Resource::Slices, slices, "bench");
  cache.replace(BindingCache::Resource::Claims, claims, "bench");
  json moving = claim_json(0);
  int flip = 0;
  for (auto _ : st) {
    moving["status"]["allocation"]["devices"]["results"][0]["device"] = (flip++ % 2) ? "gpu-1" : "gpu-0";
    cache.apply(BindingCache::Resource::Claims, "MODIFIED", moving, "bench");
  }
  st.SetItemsProcessed(st.iterations());
}
BENCHMARK(BM_ObserverOneWatchEvent)->ArgsProduct({{100, 1000, 10000}, {0, 1}})->Unit(benchmark::kMillisecond);

void BM_ObserverRelist(benchmark::State& st) {
  NullListener l;
  BindingCache cache(l, {});
  std::vector<json> claims;
  for (int i = 0; i < st.range(0); ++i) claims.push_back(claim_json(i));
  std::vector<json> slices;
  for (int n = 0; n < 50; ++n) slices.push_back(slice_json(n));
  cache.replace(BindingCache::Resource::Pods, {}, "bench");
  cache.replace(BindingCache::Resource::Slices, slices, "bench");
  for (auto _ : st) cache.replace(BindingCache::Resource::Claims, claims, "bench");
  st.SetItemsProcessed(st.iterations() * st.range(0));
}
BENCHMARK(BM_ObserverRelist)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

// The observer's cache and diff, driven without any I/O.
#include <set>

#include <gtest/gtest.h>

#include "k8s/observer.hpp"

namespace c2c::k8s {
namespace {

using nlohmann::json;
using R = BindingCache::Resource;

struct Recorder : BindingListener {
  std::vector<std::pair<std::vector<ClaimDeviceBinding>, std::vector<ClaimDeviceBinding>>> calls;
  std::vector<std::string> notices;
  void on_bindings_changed(const std::vector<ClaimDeviceBinding>& a, const std::vector<ClaimDeviceBinding>& r) override {
    calls.emplace_back(a, r);
  }
  void on_notice(const std::string& kind, const std::string& m) override { notices.push_back(kind + ": " + m); }
};

json claim(const std::string& uid, const std::string& device, const json& count = 1) {
  return {{"metadata", {{"name", "c-" + uid}, {"namespace", "n"}, {"uid", uid}}},
          {"spec", {{"devices", {{"requests", {{{"name", "r"}, {"exactly", {{"deviceClassName", "x"}, {"count", count}}}}}}}}}},
          {"status",
           {{"allocation", {{"devices", {{"results", {{{"request", "r"}, {"driver", "d.example.com"}, {"pool", "p"}, {"device", device}}}}}}}},
            {"reservedFor", {{{"resource", "pods"}, {"name", "p"}, {"uid", "pod-" + uid}}}}}}};
}

TEST(K8sCache, NothingIsReportedUntilEveryResourceIsListed) {
  Recorder rec;
  BindingCache cache(rec, {});
  cache.replace(R::Claims, {claim("a", "dev-0")}, "t");
  cache.replace(R::Pods, {}, "t");
  EXPECT_TRUE(rec.calls.empty());
  EXPECT_FALSE(cache.synced());
  cache.replace(R::Slices, {}, "t");
  ASSERT_EQ(rec.calls.size(), 1u);
  EXPECT_EQ(rec.calls[0].first.size(), 1u);
  EXPECT_TRUE(rec.calls[0].second.empty());
}

TEST(K8sCache, RelistReportsOnlyTheDifference) {
  Recorder rec;
  BindingCache cache(rec, {});
  cache.replace(R::Pods, {}, "t");
  cache.replace(R::Slices, {}, "t");
  cache.replace(R::Claims, {claim("a", "dev-0"), claim("b", "dev-1")}, "t");
  rec.calls.clear();
  cache.replace(R::Claims, {claim("a", "dev-0"), claim("b", "dev-1")}, "t");  // same list again
  EXPECT_TRUE(rec.calls.empty());
  cache.replace(R::Claims, {claim("b", "dev-2"), claim("c", "dev-3")}, "t");
  ASSERT_EQ(rec.calls.size(), 1u);
  std::set<std::string> added, removed;
  for (const auto& b : rec.calls[0].first) added.insert(b.claim_uid + "/" + b.device);
  for (const auto& b : rec.calls[0].second) removed.insert(b.claim_uid + "/" + b.device);
  EXPECT_EQ(added, (std::set<std::string>{"b/dev-2", "c/dev-3"}));
  EXPECT_EQ(removed, (std::set<std::string>{"a/dev-0", "b/dev-1"}));
  EXPECT_EQ(cache.current().size(), 2u);
}

TEST(K8sCache, MalformedUpdateIsRefusedByNameAndKeepsThePreviousVersion) {
  Recorder rec;
  BindingCache cache(rec, {});
  cache.replace(R::Pods, {}, "t");
  cache.replace(R::Slices, {}, "t");
  cache.replace(R::Claims, {claim("a", "dev-0")}, "t");
  rec.calls.clear();
  EXPECT_TRUE(cache.apply(R::Claims, "MODIFIED", claim("a", "dev-9", "four"), "watch"));
  EXPECT_TRUE(rec.calls.empty());
  ASSERT_EQ(cache.current().size(), 1u);
  EXPECT_EQ(cache.current()[0].device, "dev-0");
  ASSERT_FALSE(rec.notices.empty());
  EXPECT_NE(rec.notices.back().find("ResourceClaim n/c-a: field spec.devices.requests[0].exactly.count"), std::string::npos)
      << rec.notices.back();
  EXPECT_TRUE(cache.apply(R::Claims, "DELETED", claim("a", "dev-0"), "watch"));
  ASSERT_EQ(rec.calls.size(), 1u);
  EXPECT_EQ(rec.calls[0].second.size(), 1u);
  EXPECT_FALSE(cache.apply(R::Claims, "SOMETHING", claim("b", "dev-0"), "watch"));
}

}  // namespace
}  // namespace c2c::k8s

namespace c2c::k8s {
namespace {

json on_node(json c, const std::string& node) {
  c["status"]["allocation"]["nodeSelector"] = {
      {"nodeSelectorTerms", {{{"matchFields", {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node}}}}}}}}};
  return c;
}

TEST(K8sCache, OnlyThisNodesClaimsAreKeptAndAMoveAwayRemovesTheBinding) {
  Recorder rec;
  BindingCache cache(rec, BindingOptions{"w1", std::nullopt, false});
  cache.replace(R::Pods, {}, "t");
  cache.replace(R::Slices, {}, "t");
  cache.replace(R::Claims, {on_node(claim("a", "dev-0"), "w1"), on_node(claim("b", "dev-1"), "w2"), claim("c", "dev-2")}, "t");
  std::set<std::string> uids;
  for (const auto& b : cache.current()) uids.insert(b.claim_uid);
  EXPECT_EQ(uids, (std::set<std::string>{"a", "c"}));  // c has no nodeSelector: usable everywhere
  EXPECT_TRUE(rec.notices.empty()) << rec.notices.front();  // w2's claim is not even a warning here
  rec.calls.clear();
  cache.apply(R::Claims, "MODIFIED", on_node(claim("a", "dev-0"), "w2"), "watch");
  ASSERT_EQ(rec.calls.size(), 1u);
  EXPECT_TRUE(rec.calls[0].first.empty());
  ASSERT_EQ(rec.calls[0].second.size(), 1u);
  EXPECT_EQ(rec.calls[0].second[0].claim_uid, "a");
}

}  // namespace
}  // namespace c2c::k8s

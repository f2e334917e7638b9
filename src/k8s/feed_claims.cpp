#include "k8s/feed_claims.hpp"

#include <algorithm>
#include <set>

#include <google/protobuf/util/message_differencer.h>

#include "api/convert.hpp"

namespace c2c::k8s {

pb::ClaimDeviceBinding binding_to_proto(const ClaimDeviceBinding& b, int64_t claim_generation) {
  pb::ClaimDeviceBinding out = api::device_binding(to_core_device(b));
  out.set_claim_uid(b.claim_uid);
  out.set_claim_generation(claim_generation);
  out.set_pod_uid(b.pod_uid);
  out.set_node_name(b.node_name);
  out.set_claim_namespace(b.claim_namespace);
  out.set_claim_name(b.claim_name);
  out.set_pod_name(b.pod_name);
  return out;
}

ClaimFeedChanges ClaimFeedPlanner::update(const BindingState& state) {
  // PodInfo for every pod a binding names: labels and pod claim name -> claim UID come from the
  // observer's pods and claims (to_core); cgroup and cpus stay empty, the daemon resolves them.
  BindingSet set;
  set.bindings = state.bindings;
  CoreEntities core = to_core(set, state.claims, state.pods);
  std::map<std::string, pb::PodInfo> pods;
  for (const auto& p : core.pods) pods[p.uid] = api::to_proto(p);

  std::map<std::string, pb::UpsertClaimBindingRequest> next;  // content, claim_generation 0
  std::map<std::string, std::set<std::string>> pods_of;
  for (const auto& b : state.bindings) {
    if (b.claim_uid.empty()) continue;  // to_core warned; nothing to key it by
    *next[b.claim_uid].add_bindings() = binding_to_proto(b, 0);
    if (!b.pod_uid.empty()) pods_of[b.claim_uid].insert(b.pod_uid);
  }
  for (auto& [uid, req] : next)
    for (const auto& pod_uid : pods_of[uid])
      if (auto it = pods.find(pod_uid); it != pods.end()) *req.add_pods() = it->second;

  const auto revision = static_cast<int64_t>(std::min<uint64_t>(state.revision, INT64_MAX));
  // A remembered delete only matters while the revision has not passed it.
  std::erase_if(deleted_, [&](const auto& d) { return d.second < revision; });
  ClaimFeedChanges out;
  for (auto& [uid, content] : next) {
    auto it = last_.find(uid);
    if (it != last_.end() && google::protobuf::util::MessageDifferencer::Equals(it->second.content, content)) continue;
    int64_t previous = it != last_.end() ? it->second.generation : 0;
    if (auto d = deleted_.find(uid); d != deleted_.end()) previous = std::max(previous, d->second);
    Sent s;
    s.generation = std::max(revision, previous + 1);
    s.content = content;
    s.request = content;
    for (auto& b : *s.request.mutable_bindings()) b.set_claim_generation(s.generation);
    out.upserts.push_back(s.request);
    deleted_.erase(uid);
    last_[uid] = std::move(s);
  }
  for (auto it = last_.begin(); it != last_.end();) {
    if (next.count(it->first)) {
      ++it;
      continue;
    }
    // Deallocated, reserved elsewhere, or gone: at least the generation it was sent with, so the
    // daemon's tombstone also stops that allocation coming back (INV-1, INV-3).
    int64_t gen = std::max(revision, it->second.generation);
    out.deletes.push_back({it->first, gen});
    deleted_[it->first] = gen;
    it = last_.erase(it);
  }
  return out;
}

std::map<std::string, pb::UpsertClaimBindingRequest> ClaimFeedPlanner::current() const {
  std::map<std::string, pb::UpsertClaimBindingRequest> out;
  for (const auto& [uid, s] : last_) out[uid] = s.request;
  return out;
}

}  // namespace c2c::k8s

// The task-event path's memo (CoreImpl::derivation, spec/state-machine.md "The derivation memo").
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/hash/hash.h>
#include <re2/re2.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/core.hpp"

namespace c2c {

// Results of the task-event path that only non-task events can change (issue #13: the node
// selectors and the RE2 calls were a fifth of a task event's instructions). Pure caching: every
// entry is what the plain computation gives. The keys are addresses of the core's own policy and
// pod states and (id, serial) of interned texts, so CoreImpl::apply clears the memo on every event
// that is not a task event (a policy, pod, claim or node event may free or change what a key
// names), and a copy or move of the core starts with an empty one. Policies a preview passes in
// (PolicyOverride) are never memoized: their states are temporaries.
class DeriveMemo {
 public:
  DeriveMemo() = default;
  DeriveMemo(const DeriveMemo&) {}
  DeriveMemo(DeriveMemo&&) noexcept {}
  DeriveMemo& operator=(const DeriveMemo&) {
    clear();
    return *this;
  }
  DeriveMemo& operator=(DeriveMemo&&) noexcept {
    clear();
    return *this;
  }
  void clear() {
    if (!matches_.empty()) absl::flat_hash_map<MatchKey, bool, MatchKeyHash>().swap(matches_);
    node_selected_.clear();
    if (!derivations_.empty()) absl::flat_hash_map<DerivationKey, Derivation, DerivationKeyHash>().swap(derivations_);
  }
  // Given back as tasks leave (memory is returned when tasks exit, issue #13): entries outgrowing
  // the live tasks mostly name texts and inputs no task has any more.
  void fit(size_t live_tasks) {
    const size_t bound = 2 * live_tasks + 64;
    if (matches_.size() > bound || derivations_.size() > bound) clear();
  }
  // A pattern's result on one interned text (id and serial of CoreImpl::strings).
  template <class Compute>
  bool match(const RE2* pattern, uint32_t id, uint64_t serial, Compute&& compute) {
    if (matches_.size() >= kMaxMatches) matches_.clear();  // bounded: texts come and go
    auto [it, fresh] = matches_.try_emplace(MatchKey{pattern, id, serial}, false);
    if (fresh) it->second = compute();
    return it->second;
  }
  template <class Compute>
  bool node_selected(const NodeSchedulingPolicy* p, Compute&& compute) {
    auto [it, fresh] = node_selected_.try_emplace(p, false);
    if (fresh) it->second = compute();
    return it->second;
  }

  // What a task derives to (CoreImpl::derivation), for every task with the same inputs: the
  // serials (InternPool::serial) of its pod, comm, title, role and cpuset, and for a thread that
  // is not its group's leader, its leader's comm and title (the TGID fallback).
  struct DerivationKey {
    uint64_t pod = 0, comm = 0, title = 0, role = 0, cpuset = 0, leader_comm = 0, leader_title = 0;
    uint8_t leader = 0;  // 0: the task leads its group; 1: a thread of a live leader; 2: of none
    bool operator==(const DerivationKey&) const = default;
  };
  struct Derivation {
    bool wins = false;        // a policy matches
    RuntimeValue value;       // the winner's, without the task's start and tgid
    Strategy strategy = Strategy::ExactTid;
    std::shared_ptr<const Origin> origin;  // the winner's lineage, from the core's origin pool
    bool conflict = false;    // more than one policy matched: winner, losers, rule (no task key)
    Conflict resolution;
  };
  const Derivation* derivation(const DerivationKey& k) const {
    auto it = derivations_.find(k);
    return it == derivations_.end() ? nullptr : &it->second;
  }
  const Derivation& remember(const DerivationKey& k, Derivation d) {
    if (derivations_.size() >= kMaxDerivations) derivations_.clear();
    return derivations_.insert_or_assign(k, std::move(d)).first->second;
  }

 private:
  static constexpr size_t kMaxDerivations = 1 << 14;
  struct DerivationKeyHash {
    size_t operator()(const DerivationKey& k) const {
      return absl::HashOf(k.pod, k.comm, k.title, k.role, k.cpuset, k.leader_comm, k.leader_title, k.leader);
    }
  };
  absl::flat_hash_map<DerivationKey, Derivation, DerivationKeyHash> derivations_;
  static constexpr size_t kMaxMatches = 1 << 16;
  struct MatchKey {
    const RE2* pattern;
    uint32_t id;
    uint64_t serial;
    bool operator==(const MatchKey& o) const { return pattern == o.pattern && id == o.id && serial == o.serial; }
  };
  struct MatchKeyHash {
    size_t operator()(const MatchKey& k) const { return absl::HashOf(k.pattern, k.id, k.serial); }
  };
  absl::flat_hash_map<MatchKey, bool, MatchKeyHash> matches_;
  absl::flat_hash_map<const NodeSchedulingPolicy*, bool> node_selected_;
};

}  // namespace c2c

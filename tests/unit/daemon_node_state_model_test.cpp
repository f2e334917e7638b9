// A model-based test of the daemon's node state and durability layer (issue 45): random sequences
// of policy RPCs, host task events, map faults (a write lost, a write of an older value, an entry
// deleted, ENOSPC, EMFILE) and kill -9/restart points, checked after every step against a naive
// reference model of every reply, every intent state and every map entry; a restart starts from
// the durable files the sequence left (state.json, state.log, generation) and the pinned map, which
// outlives the daemon.
//
// The system under test is the daemon's own units (Core, DurableState with its log and loader, the
// generation lease and its guard, IntentTable, the intents' facts and their settling
// (node_state/intent_settling.hpp), the read-back comparisons (confirm_pass.hpp), the Applier)
// composed in the order engine.cpp composes them (startup, the command batch, group commit,
// reconcile, the read-backs). The code that turns counts into intent states and compares the map
// with the core is the engine's own, called, not copied (issue 45); the Engine itself needs pinned
// BPF maps, sysfs and a loop thread, so the order of its calls is mirrored here: a bug in that
// order is out of this test's reach (spec/daemon.md, "Intents").
//
// What the reference model promises, from spec/daemon.md "Intents" and spec/state-machine.md:
//  * replies: the generation rules (INV-3) of upsert and delete, exactly;
//  * an intent is APPLIED only when the map holds, for every task its policy matches, the entry
//    the node wants, equal (not merely present: a key with an older value is not applied);
//  * the durable state after a restart is what was acknowledged; the generation never goes back
//    (INV-4) and no entry carries one above the durable ceiling;
//  * once the faults stop, a reconcile and two read-backs make every intent with tasks APPLIED and
//    the map exactly the model's table.
// RapidCheck: 3,000 sequences of up to 80 steps by default (a few seconds); RC_PARAMS overrides (e.g.
// RC_PARAMS="max_success=30000 max_size=120" for a longer run).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "daemon/reconciler/confirm_pass.hpp"
#include "daemon/durable/durable_load.hpp"
#include "daemon/durable/generation_guard.hpp"
#include "daemon/node_state/intents.hpp"
#include "daemon/node_state/intent_settling.hpp"
#include "mirror/applier.hpp"
#include "mirror/policy_value.hpp"
#include "mirror_fake_map.hpp"

namespace c2c::daemon {
namespace {

namespace fs = std::filesystem;
constexpr const char* kNode = "node-a";
const char* const kPolicies[] = {"pa", "pb"};
const char* const kCommOf[] = {"alpha", "beta"};  // pa matches ^alpha$, pb ^beta$: no conflicts
const char* const kComms[] = {"alpha", "beta", "other"};
const Nanos kSlices[] = {2'000'000, 3'000'000};

// ---------------------------------------------------------------- the map, with faults

enum class Fault { None, Lost, Older, NoSpace, TooManyFiles };

// The fake pinned map with one-shot write faults: the next write of any key is lost (reported
// done, not stored), stores an older value (the key's previous one, or this one a generation
// back), or fails with ENOSPC / EMFILE.
class FaultyMap final : public mirror::PolicyMapIo {
 public:
  mirror::testing::FakePolicyMap inner{64};
  Fault armed = Fault::None;
  size_t faults_met = 0;

  uint32_t max_entries() const override { return inner.max_entries(); }
  int lookup(uint32_t tid, c2c_policy_value* out) override { return inner.lookup(tid, out); }
  int update(uint32_t tid, const c2c_policy_value& v) override {
    if (int e = fault(tid, v)) return e < 0 ? 0 : e;
    return inner.update(tid, v);
  }
  int remove(uint32_t tid) override { return inner.remove(tid); }
  mirror::BatchResult update_batch(const uint32_t* tids, const c2c_policy_value* values, size_t n) override {
    for (size_t i = 0; i < n; ++i)
      if (int e = update(tids[i], values[i]); e != 0) return {e, i};
    return {0, n};
  }
  mirror::BatchResult delete_batch(const uint32_t* tids, size_t n) override { return inner.delete_batch(tids, n); }
  int lookup_batch(const uint64_t* in, uint64_t* out, uint32_t* tids, c2c_policy_value* values,
                   uint32_t* count) override {
    return inner.lookup_batch(in, out, tids, values, count);
  }
  int next_key(const uint32_t* prev, uint32_t* next) override { return inner.next_key(prev, next); }

 private:
  // 0: write normally; > 0: fail with that errno; < 0: done here, report success.
  int fault(uint32_t tid, const c2c_policy_value& v) {
    const Fault f = armed;
    if (f == Fault::None) return 0;
    armed = Fault::None;
    ++faults_met;
    switch (f) {
      case Fault::Lost: return -1;
      case Fault::Older: {
        if (!inner.entries.count(tid)) {
          c2c_policy_value old = v;
          old.generation = v.generation > 1 ? v.generation - 1 : 0;
          old.slice_ns = v.slice_ns + 1'000'000;
          inner.entries[tid] = old;
        }
        return -1;
      }
      case Fault::NoSpace: return ENOSPC;
      case Fault::TooManyFiles: return EMFILE;
      case Fault::None: break;
    }
    return 0;
  }
};

// ---------------------------------------------------------------- the node (the daemon's units)

enum class Reply { Applied, Ignored, Invalid, Unavailable };
const char* reply_name(Reply r) {
  switch (r) {
    case Reply::Applied: return "Applied";
    case Reply::Ignored: return "Ignored";
    case Reply::Invalid: return "Invalid";
    case Reply::Unavailable: return "Unavailable";
  }
  return "?";
}

NodeInfo node_info() {
  NodeInfo n;
  n.name = kNode;
  n.cpus = CpuSet::range(0, 7);
  n.numa_cpus = {{0, CpuSet::range(0, 7)}};
  return n;
}

NodeSchedulingPolicy policy(unsigned which, int64_t generation, Nanos slice) {
  NodeSchedulingPolicy p;
  p.name = kPolicies[which];
  p.generation = generation;
  p.node_names = {kNode};
  p.command_regex = std::string("^") + kCommOf[which] + "$";
  p.priority = 1;
  p.execution_time = slice;
  return p;
}

class Node {
 public:
  Node(fs::path dir, FaultyMap& map, const std::map<uint32_t, Task>& host)
      : dir_(std::move(dir)), map_(map), host_(host), applier_(map, apply_options()) {}

  // engine.cpp's startup order: lease, restart, node, durable state, tasks, read-back, intents,
  // reconcile, persist.
  bool start(std::string* err) {
    lease_ = open_node_lease(dir_.string(), &map_, false, err);
    if (!lease_) return false;
    if (auto r = core_.apply(DaemonRestart{lease_->floor()}); !r.ok()) return *err = r.message, false;
    if (auto e = lease_->cover(core_.generation()); !e.empty()) return *err = e, false;
    core_.apply(NodeInfoEvent{node_info()});
    LoadedState loaded;
    if (!load_durable_state(dir_.string(), &loaded, err)) return false;
    durable_ = std::move(loaded.state);
    log_ = std::move(loaded.log);
    for (const auto& e : restore_events(durable_)) core_.apply(e);
    for (const auto& [tid, t] : host_) core_.apply(TaskSeen{t});
    auto actual = applier_.read_actual();
    if (!actual) return *err = actual.error(), false;
    core_.apply(BpfObserved{actual->entries});
    core_.apply(SyncComplete{});
    intents_.restore(durable_.intents);
    refresh_intents();
    facts_.observed();
    reconcile();
    if (auto e = compact(); !e.empty()) return *err = e, false;
    return true;
  }

  // engine_api.cpp's upsert_policy, then the batch's group commit; `kill`: the process dies after
  // the batch is durable, before the map is written or the reply sent.
  Reply upsert(const NodeSchedulingPolicy& p, bool kill = false) {
    const Snapshot before{core_, durable_, intents_};
    auto r = apply(NodePolicyUpsert{p});
    if (r.status == ApplyResult::Status::Invalid) return Reply::Invalid;
    if (r.status == ApplyResult::Status::Ignored) return Reply::Ignored;
    auto stored = core_.node_policy(p.name);
    record(PutPolicy{*stored});
    intents_.accepted(PolicyKind::Node, p.name, stored->generation, kNode, r.warnings, now_++);
    record(PutIntent{*intents_.find(PolicyKind::Node, p.name)});
    return commit(before, kill);
  }
  Reply remove(unsigned which, int64_t generation, bool kill = false) {
    const Snapshot before{core_, durable_, intents_};
    auto live = core_.node_policy(kPolicies[which]);
    auto r = apply(PolicyDelete{PolicyKind::Node, kPolicies[which], generation});
    if (r.status == ApplyResult::Status::Invalid) return Reply::Invalid;
    if (r.status == ApplyResult::Status::Ignored || !live) return Reply::Ignored;
    record(DeletePolicy{PolicyKind::Node, kPolicies[which], std::max(generation, live->generation)});
    intents_.removed(PolicyKind::Node, kPolicies[which]);
    return commit(before, kill);
  }
  // A host event (the task-event stream), then the turn's reconcile.
  void host_event(const Event& e) {
    apply(e);
    reconcile();
  }

  // The read-back passes of engine.cpp: the short one over the keys written since the last pass
  // (drift_among), the full one over the whole map; drift is re-observed and repaired (INV-5),
  // an unchanged map confirms what it holds as desired.
  void read_back(bool full) {
    bool written_clean = false;
    if (!full && !written_.too_many()) {
      if (auto k = applier_.read_keys(written_.tids()))
        written_clean = drift_among(written_.tids(), k->entries, core_.actual()) == 0;
    }
    if (written_clean) {
      written_.clear();
      confirm_read_back();
    } else if (auto r = applier_.read_actual()) {
      written_.clear();
      if (whole_map_drift(r->entries, core_.actual())) {
        core_.apply(BpfObserved{r->entries});
        facts_.drifted(core_);
        changed_ = true;
      } else {
        confirm_read_back();
      }
    }
    if (full) refresh_intents();
    settle_intents(nullptr);
    if (changed_) reconcile();
  }

  // A turn with nothing new but the retry timer: the writes still owed are made (the engine's
  // retry queue, due after its backoff).
  void timer() { reconcile(); }

  std::string compact() {
    durable_.intents = intents_.list();
    if (auto e = save_state((dir_ / "state.json").string(), durable_); !e.empty()) return e;
    if (log_ && log_->size() > 0) log_->reset();
    return "";
  }

  const Core& core() const { return core_; }
  const IntentTable& intents() const { return intents_; }
  const mirror::GenerationLease& lease() const { return *lease_; }

 private:
  struct Snapshot {
    Core core;
    DurableState durable;
    IntentTable intents;
  };
  static mirror::ApplyOptions apply_options() {
    mirror::ApplyOptions o;
    o.retry.max_attempts = 1;  // the engine's: a failed key waits for the next turn
    o.read_chunk = 16;
    return o;
  }
  ApplyResult apply(const Event& e) {
    ApplyResult r = core_.apply(e);
    facts_.touched(r.changed_tids);
    if (r.status == ApplyResult::Status::Applied && !r.changed_tids.empty()) changed_ = true;
    return r;
  }
  void record(StateChange c) {
    apply_change(durable_, c);
    batch_.push_back(std::move(c));
  }
  // commit_batch + write_batch: the lease covers the batch's generation, the changes go to the
  // log as one record (or a compaction); on failure the batch is rolled back.
  Reply commit(const Snapshot& before, bool kill) {
    std::string e;
    if (core_.generation() > lease_->durable()) e = lease_->cover(core_.generation());
    if (e.empty()) {
      ++durable_.log_seq;
      e = log_->append(encode_changes(durable_.log_seq, batch_));
      if (!e.empty()) e = compact();
    }
    batch_.clear();
    if (!e.empty()) {
      core_ = before.core;
      durable_ = before.durable;
      intents_ = before.intents;
      return Reply::Unavailable;
    }
    if (kill) return Reply::Applied;  // the caller drops this node now
    reconcile();
    return Reply::Applied;
  }
  void settle_facts() { facts_.settle(core_); }
  void confirm_read_back() { facts_.confirm(core_); }
  void settle_intents(const mirror::ApplyReport* report) {
    daemon::settle_intents(intents_, durable_, facts_.facts(core_, report), owed_, now_++);
  }
  void refresh_intents() { daemon::refresh_intents(intents_, core_, durable_, kNode, now_++); }
  // engine.cpp's reconcile: the plan's delta (the full plan while writes are owed: the engine's
  // retry queue rebuilds each owed op from the tables), the lease, the apply, BpfSynced when
  // everything landed, the intents settled.
  void reconcile() {
    changed_ = false;
    Plan plan = core_.take_plan_delta();
    if (!owed_.empty()) plan = core_.plan();
    for (const auto& op : plan.ops) facts_.touched(op.tid);
    if (plan.ops.empty()) {
      settle_facts();
      settle_intents(nullptr);
      return;
    }
    if (auto e = lease_->cover(core_.generation()); !e.empty()) {
      owed_ = "generation lease: " + e;
      settle_facts();
      settle_intents(nullptr);
      return;
    }
    auto report = applier_.apply(plan);
    for (const auto& op : report.ops) written_.add(op.tid);
    if (report.ok()) {
      core_.apply(BpfSynced{});
      owed_.clear();
    } else {
      owed_ = !report.error.empty() ? report.error : std::to_string(report.failed) + " map operations failed";
    }
    settle_facts();
    settle_intents(&report);
  }

  fs::path dir_;
  FaultyMap& map_;
  const std::map<uint32_t, Task>& host_;
  Core core_;
  DurableState durable_;
  IntentTable intents_;
  IntentFacts facts_;
  std::optional<mirror::GenerationLease> lease_;
  std::unique_ptr<StateLog> log_;
  mirror::Applier applier_;
  WrittenKeys written_;
  std::vector<StateChange> batch_;
  bool changed_ = false;
  std::string owed_;
  int64_t now_ = 1;
};

// ---------------------------------------------------------------- the reference model

struct RefPolicy {
  int64_t generation = 0;
  Nanos slice = 0;
};

struct Reference {
  std::map<std::string, RefPolicy> live;
  std::map<std::string, int64_t> high_water;  // tombstones included
  std::map<uint32_t, Task> tasks;              // the host's live tasks

  // INV-3's generation rules (spec/state-machine.md §4), for one node policy.
  Reply upsert(unsigned which, int64_t generation, Nanos slice) {
    const std::string name = kPolicies[which];
    const int64_t hw = high_water.count(name) ? high_water[name] : 0;
    auto stored = live.find(name);
    if (generation == 0) {
      if (stored != live.end() && stored->second.slice == slice) return Reply::Ignored;
      generation = hw + 1;
    } else if (generation < hw) {
      return Reply::Ignored;
    } else if (generation == hw) {
      if (stored == live.end() || stored->second.slice == slice) return Reply::Ignored;
      return Reply::Invalid;
    }
    live[name] = RefPolicy{generation, slice};
    high_water[name] = generation;
    return Reply::Applied;
  }
  Reply remove(unsigned which, int64_t generation) {
    const std::string name = kPolicies[which];
    auto stored = live.find(name);
    if (stored == live.end()) return Reply::Ignored;
    if (generation != 0 && generation < stored->second.generation) return Reply::Ignored;
    high_water[name] = std::max({high_water[name], stored->second.generation, generation});
    live.erase(stored);
    return Reply::Applied;
  }
  // The entry each task gets: the policy whose comm it has (the two never overlap).
  std::map<uint32_t, std::pair<std::string, Nanos>> desired() const {
    std::map<uint32_t, std::pair<std::string, Nanos>> out;
    for (const auto& [tid, t] : tasks)
      for (unsigned i = 0; i < 2; ++i)
        if (t.comm == kCommOf[i])
          if (auto p = live.find(kPolicies[i]); p != live.end()) out[tid] = {kPolicies[i], p->second.slice};
    return out;
  }
};

// ---------------------------------------------------------------- steps

enum class Kind : uint8_t { Upsert, Delete, TaskSeen, TaskExited, Fault, DeleteEntry, ReadBack, Restart, Settle, Compact, Timer };
struct Step {
  Kind kind = Kind::Upsert;
  uint8_t a = 0, b = 0, c = 0;
};
void showValue(const Step& s, std::ostream& os) {
  os << "Step{" << static_cast<int>(s.kind) << "," << int(s.a) << "," << int(s.b) << "," << int(s.c) << "}";
}

rc::Gen<Step> gen_step() {
  auto kind = rc::gen::weightedElement<Kind>({{5, Kind::Upsert},
                                              {2, Kind::Delete},
                                              {5, Kind::TaskSeen},
                                              {2, Kind::TaskExited},
                                              {4, Kind::Fault},
                                              {1, Kind::DeleteEntry},
                                              {4, Kind::ReadBack},
                                              {2, Kind::Restart},
                                              {2, Kind::Settle},
                                              {1, Kind::Compact},
                                              {2, Kind::Timer}});
  return rc::gen::map(rc::gen::tuple(kind, rc::gen::inRange<uint8_t>(0, 64), rc::gen::inRange<uint8_t>(0, 64),
                                     rc::gen::inRange<uint8_t>(0, 64)),
                      [](const std::tuple<Kind, uint8_t, uint8_t, uint8_t>& t) {
                        return Step{std::get<0>(t), std::get<1>(t), std::get<2>(t), std::get<3>(t)};
                      });
}

// How often the situations the model is about were reached (printed at the end of the run).
struct Counts {
  size_t sequences = 0, steps = 0, restarts = 0, kills = 0, faults_met = 0, applied_checked = 0, settles = 0;
  size_t older_value_seen = 0;  // a read-back met a key holding another value than written
};
Counts g_counts;

// The default run (the suite's budget: <= 20 s on a loaded 2-core machine); RC_PARAMS overrides.
const bool g_default_params = [] {
  ::setenv("RC_PARAMS", "max_success=3000 max_size=80", /*overwrite=*/0);
  return true;
}();

fs::path state_root() {
  const fs::path shm("/dev/shm");  // tmpfs: the fsyncs cost nothing, the semantics are the same
  return (fs::exists(shm) ? shm : fs::temp_directory_path()) / ("c2c-node-model-" + std::to_string(::getpid()));
}

// ---------------------------------------------------------------- the property

struct Run {
  fs::path dir;
  FaultyMap map;
  Reference ref;
  std::unique_ptr<Node> node;
  uint64_t highest_generation = 0;  // the highest the node ever reported (INV-4 across restarts)
  uint64_t next_start = 100;
  // An entry deleted behind the daemon's back is seen at the next full read-back, not before: until
  // then an APPLIED intent may still name it (the read-back interval, spec/daemon.md "Intents").
  bool external_drift = false;
  std::ostringstream log;

  explicit Run(fs::path d) : dir(std::move(d)) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Run() { fs::remove_all(dir); }

  void restart() {
    node.reset();  // kill -9: nothing of the process survives but its files and the pinned map
    node = std::make_unique<Node>(dir, map, ref.tasks);
    std::string err;
    if (!node->start(&err)) RC_FAIL("start refused: " + err);
    RC_ASSERT(node->core().generation() > highest_generation);  // INV-4: never back, never reused
    ++g_counts.restarts;
  }

  void check(const std::string& after) {
    const Core& core = node->core();
    highest_generation = std::max(highest_generation, core.generation());
    // INV-4: no entry above the durable ceiling.
    for (const auto& [tid, v] : map.inner.entries)
      if (v.generation <= static_cast<uint64_t>(kMaxGeneration))
        RC_ASSERT(v.generation <= node->lease().durable() || map.inner.entries.empty());
    // One intent per live policy, at its generation; none for a deleted one.
    for (const char* name : kPolicies) {
      const Intent* in = node->intents().find(PolicyKind::Node, name);
      auto p = ref.live.find(name);
      if (p == ref.live.end()) {
        if (in) RC_FAIL(after + ": an intent for the deleted " + std::string(name));
        continue;
      }
      if (!in) RC_FAIL(after + ": no intent for " + std::string(name));
      RC_ASSERT(in->generation == p->second.generation);
      if (in->state != IntentState::Applied || external_drift) continue;
      // APPLIED: every task the policy matches has the wanted entry in the map, equal.
      ++g_counts.applied_checked;
      size_t matched = 0;
      for (const auto& [tid, want] : ref.desired()) {
        if (want.first != name) continue;
        ++matched;
        auto m = map.inner.entries.find(tid);
        auto d = core.desired().find(tid);
        const bool equal = m != map.inner.entries.end() && d != core.desired().end() &&
                           mirror::from_abi(m->second) == d->second.value &&
                           d->second.value.slice_ns == want.second && d->second.value.start == ref.tasks.at(tid).key.start;
        if (!equal) {
          log << after << ": " << name << " APPLIED but tid " << tid << " is "
              << (m == map.inner.entries.end() ? "absent from the map" : "in the map with another value") << "\n";
          RC_FAIL(log.str());
        }
      }
      RC_ASSERT(in->matched_tasks == matched);
      RC_ASSERT(matched > 0);
    }
  }

  // The faults stop: a reconcile and two read-backs; then everything is APPLIED and the map is
  // exactly the model's table (keys, slices, starts).
  void settle() {
    map.armed = Fault::None;
    node->timer();
    node->read_back(true);
    external_drift = false;
    node->read_back(true);
    node->read_back(false);
    ++g_counts.settles;
    const auto want = ref.desired();
    std::set<uint32_t> keys;
    for (const auto& [tid, v] : map.inner.entries) keys.insert(tid);
    std::set<uint32_t> want_keys;
    for (const auto& [tid, w] : want) want_keys.insert(tid);
    if (keys != want_keys) RC_FAIL("settled: the map's keys are not the model's");
    for (const auto& [tid, w] : want) {
      RC_ASSERT(map.inner.entries.at(tid).slice_ns == w.second);
      RC_ASSERT(map.inner.entries.at(tid).start_ticks == ref.tasks.at(tid).key.start);
    }
    for (const auto& [name, p] : ref.live) {
      const Intent* in = node->intents().find(PolicyKind::Node, name);
      RC_ASSERT(in != nullptr);
      bool has_tasks = false;
      for (const auto& [tid, w] : want) has_tasks = has_tasks || w.first == name;
      const IntentState expected = has_tasks ? IntentState::Applied : IntentState::Pending;
      if (in->state != expected)
        RC_FAIL("settled: " + std::string(name) + " is " + to_string(in->state) + " (" + in->reason + "), not " +
                to_string(expected));
    }
  }

  void step(const Step& s) {
    ++g_counts.steps;
    std::ostringstream what;
    showValue(s, what);
    const std::string after = what.str();
    switch (s.kind) {
      case Kind::Upsert:
      case Kind::Delete: {
        const unsigned which = s.a % 2;
        const int64_t hw = ref.high_water.count(kPolicies[which]) ? ref.high_water[kPolicies[which]] : 0;
        const int64_t gens[] = {0, hw + 1, hw, std::max<int64_t>(hw - 1, 1), hw + 3};
        const int64_t g = gens[s.b % 5];
        const bool kill = s.c % 8 == 7;
        Reply got, want;
        if (s.kind == Kind::Upsert) {
          const Nanos slice = kSlices[s.c % 2];
          want = ref.upsert(which, g, slice);
          got = node->upsert(policy(which, g, slice), kill);
        } else {
          want = ref.remove(which, g);
          got = node->remove(which, g, kill);
        }
        if (got != want)
          RC_FAIL(after + ": reply " + reply_name(got) + ", the model says " + reply_name(want));
        if (kill && got == Reply::Applied) {  // died after the durable write, before the map and the reply
          ++g_counts.kills;
          restart();
        }
        break;
      }
      case Kind::TaskSeen: {
        const uint32_t tid = 1 + s.a % 5;
        Task t;
        t.key = TaskKey{tid, next_start++};
        t.tgid = tid;
        t.comm = kComms[s.b % 3];
        t.cgroup = "/system.slice/w.service";
        if (auto old = ref.tasks.find(tid); old != ref.tasks.end()) {  // the tid is reused
          node->host_event(TaskExited{old->second.key});
          ref.tasks.erase(old);
        }
        ref.tasks[tid] = t;
        node->host_event(c2c::TaskSeen{t});
        break;
      }
      case Kind::TaskExited: {
        const uint32_t tid = 1 + s.a % 5;
        if (auto old = ref.tasks.find(tid); old != ref.tasks.end()) {
          node->host_event(c2c::TaskExited{old->second.key});
          ref.tasks.erase(old);
        }
        break;
      }
      case Kind::Fault: {
        const Fault faults[] = {Fault::Lost, Fault::Older, Fault::NoSpace, Fault::TooManyFiles};
        map.armed = faults[s.a % 4];
        break;
      }
      case Kind::DeleteEntry:
        if (!map.inner.entries.empty()) {
          auto it = map.inner.entries.begin();
          std::advance(it, s.a % map.inner.entries.size());
          map.inner.entries.erase(it);
          external_drift = true;
        }
        break;
      case Kind::ReadBack: {
        for (const auto& [tid, v] : map.inner.entries)
          if (auto a = node->core().actual().find(tid); a != node->core().actual().end() && !(mirror::from_abi(v) == a->second))
            ++g_counts.older_value_seen;
        node->read_back(s.a % 2 == 0);
        if (s.a % 2 == 0) external_drift = false;
        break;
      }
      case Kind::Restart:
        restart();  // the start reads the whole map back
        external_drift = false;
        break;
      case Kind::Settle: settle(); break;
      case Kind::Compact: node->compact(); break;
      case Kind::Timer: node->timer(); break;
    }
    check(after);
  }
};

RC_GTEST_PROP(DaemonNodeStateModel, EveryReplyIntentAndEntryAsTheModelSays, ()) {
  const auto steps = *rc::gen::container<std::vector<Step>>(gen_step());
  ++g_counts.sequences;
  Run run(state_root() / std::to_string(g_counts.sequences));
  run.restart();
  for (const auto& s : steps) {
    run.step(s);
    if (!run.log.str().empty()) RC_FAIL(run.log.str());
  }
  run.settle();
  g_counts.faults_met += run.map.faults_met;
  if (!run.log.str().empty()) RC_FAIL(run.log.str());
}

class CountsReporter : public ::testing::Environment {
 public:
  void TearDown() override {
    std::cout << "daemon node-state model: " << g_counts.sequences << " sequences, " << g_counts.steps << " steps, "
              << g_counts.restarts << " starts (" << g_counts.kills << " kills after a durable write), "
              << g_counts.faults_met << " map faults met, " << g_counts.older_value_seen
              << " read-backs of a key holding another value, " << g_counts.applied_checked
              << " APPLIED intents checked entry by entry, " << g_counts.settles << " settles" << std::endl;
  }
};
const auto* const g_reporter = ::testing::AddGlobalTestEnvironment(new CountsReporter);

}  // namespace
}  // namespace c2c::daemon

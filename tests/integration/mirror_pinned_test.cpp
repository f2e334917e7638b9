// The pinned policy map set on the real bpffs: BTF, re-open, refusal of foreign pins, pruning of
// hand-injected entries, and the fail-closed full map.
#include <bpf/bpf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "mirror/applier.hpp"
#include "mirror/policy_value.hpp"
#include "mirror/diff.hpp"
#include "mirror/kernel_map.hpp"
#include "mirror/pinned_maps.hpp"
#include "mirror/synthetic.hpp"
#include "mirror_test_env.hpp"

namespace c2c::mirror {
namespace {

using testing::private_pin_root;

std::string run(const std::string& cmd, int* status = nullptr) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = ::pclose(p);
  if (status != nullptr) *status = st;
  return out;
}

std::string hex_bytes(const void* data, size_t n) {
  std::string out;
  const auto* b = static_cast<const unsigned char*>(data);
  char tmp[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(tmp, sizeof tmp, "%02x ", b[i]);
    out += tmp;
  }
  return out;
}

uint32_t map_id(int fd) {
  bpf_map_info info;
  std::memset(&info, 0, sizeof info);
  __u32 len = sizeof info;
  return bpf_map_get_info_by_fd(fd, &info, &len) == 0 ? info.id : 0;
}

struct MirrorPinned : ::testing::Test {
  std::string root;
  PinOptions opts;
  void SetUp() override {
    C2C_REQUIRE_BPFFS();
    root = private_pin_root("pinned");
    opts.pin_root = root;
  }
  void TearDown() override {
    if (!root.empty()) PinnedMaps::remove_pins(root);
  }
  std::unique_ptr<PinnedMaps> open_ok(const PinOptions& o) {
    auto m = PinnedMaps::open(o);
    EXPECT_TRUE(m.ok()) << m.error();
    return m.ok() ? std::move(m.value()) : nullptr;
  }
  static std::vector<ActualEntry> read_all(Applier& a) {
    auto r = a.read_actual();
    EXPECT_TRUE(r.ok()) << r.error();
    return r.ok() ? r->entries : std::vector<ActualEntry>{};
  }
  static void expect_equal(const std::vector<ActualEntry>& actual, const DesiredTable& desired) {
    ASSERT_EQ(actual.size(), desired.size());
    for (const auto& e : actual) {
      auto it = desired.find(e.tid);
      ASSERT_NE(it, desired.end()) << "stale tid " << e.tid;
      EXPECT_EQ(e.value, it->second) << "tid " << e.tid;
    }
  }
};

TEST_F(MirrorPinned, CreatesPinsWithBtfThatSurviveAReopen) {
  uint32_t id = 0;
  {
    auto maps = open_ok(opts);
    ASSERT_TRUE(maps);
    EXPECT_TRUE(maps->created());
    id = map_id(maps->policy_fd());
    KernelPolicyMap map(maps->policy_fd(), maps->policy_max_entries());
    Applier a(map);
    ASSERT_TRUE(a.apply(diff_plan(synthetic_table(2, 10, 3), {}, false)).ok());
  }
  auto maps = open_ok(opts);
  ASSERT_TRUE(maps);
  EXPECT_FALSE(maps->created()) << "the second open re-uses the pins";
  EXPECT_EQ(map_id(maps->policy_fd()), id);
  KernelPolicyMap map(maps->policy_fd(), maps->policy_max_entries());
  Applier a(map);
  expect_equal(read_all(a), synthetic_table(2, 10, 3));

  // bpftool prints named fields because the maps carry BTF.
  int status = 0;
  std::string out = run("bpftool -j map dump pinned " + root + "/" C2C_POLICY_MAP_NAME, &status);
  ASSERT_EQ(status, 0) << out;
  auto json = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(json.is_array()) << out;
  ASSERT_EQ(json.size(), 10u);
  const auto& first = json[0].contains("formatted") ? json[0]["formatted"] : json[0];
  EXPECT_TRUE(first["key"].contains("tid")) << first.dump();
  EXPECT_TRUE(first["value"].contains("start_ticks")) << first.dump();
  EXPECT_TRUE(first["value"].contains("allowed_cpus")) << first.dump();
  EXPECT_EQ(first["value"]["abi_version"], C2C_ABI_VERSION);
}

// Kernel state that vanished under a holder (spec/daemon.md): a deleted pin, a pin replaced by
// another map, and the whole pin root are restored from the held maps, entries intact.
TEST_F(MirrorPinned, RestorePinsRepinsTheHeldMapsWithTheirEntries) {
  auto maps = open_ok(opts);
  ASSERT_TRUE(maps);
  const uint32_t ours = map_id(maps->policy_fd());
  KernelPolicyMap map(maps->policy_fd(), maps->policy_max_entries());
  Applier a(map);
  ASSERT_TRUE(a.apply(diff_plan(synthetic_table(4, 20, 3), {}, false)).ok());
  auto nothing = maps->restore_pins();
  ASSERT_TRUE(nothing.ok()) << nothing.error();
  EXPECT_TRUE(nothing->empty()) << nothing->front();

  const std::string policy_pin = root + "/" C2C_POLICY_MAP_NAME;
  auto pinned_id = [&](const std::string& pin) {
    const int fd = bpf_obj_get(pin.c_str());
    if (fd < 0) return 0u;
    const uint32_t id = map_id(fd);
    ::close(fd);
    return id;
  };
  ASSERT_EQ(::unlink(policy_pin.c_str()), 0);
  auto one = maps->restore_pins();
  ASSERT_TRUE(one.ok()) << one.error();
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ(one->front(), policy_pin + ": deleted");
  EXPECT_EQ(pinned_id(policy_pin), ours);

  // Another map at our pin (e.g. a second creator): ours goes back, the other is unpinned.
  ASSERT_EQ(::unlink(policy_pin.c_str()), 0);
  const int other = bpf_map_create(BPF_MAP_TYPE_HASH, "c2c_other", 4, 8, 4, nullptr);
  ASSERT_GE(other, 0) << std::strerror(errno);
  ASSERT_EQ(bpf_obj_pin(other, policy_pin.c_str()), 0) << std::strerror(errno);
  const uint32_t other_id = map_id(other);
  ::close(other);
  auto replaced = maps->restore_pins();
  ASSERT_TRUE(replaced.ok()) << replaced.error();
  ASSERT_EQ(replaced->size(), 1u);
  EXPECT_EQ(replaced->front(), policy_pin + ": replaced by map id " + std::to_string(other_id));
  EXPECT_EQ(pinned_id(policy_pin), ours);

  ASSERT_EQ(PinnedMaps::remove_pins(root), "");
  auto all = maps->restore_pins();
  ASSERT_TRUE(all.ok()) << all.error();
  EXPECT_EQ(all->size(), 4u);
  // A consumer that opens the pins now sees the same maps and every entry.
  PinOptions consumer = opts;
  consumer.create = false;
  auto again = open_ok(consumer);
  ASSERT_TRUE(again);
  EXPECT_EQ(map_id(again->policy_fd()), ours);
  KernelPolicyMap map2(again->policy_fd(), again->policy_max_entries());
  Applier b(map2);
  expect_equal(read_all(b), synthetic_table(4, 20, 3));
}

TEST_F(MirrorPinned, RefusesAPinWithAnotherValueLayout) {
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "c2c_policy", 4, 104, C2C_POLICY_MAX_ENTRIES, nullptr);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(bpf_obj_pin(fd, (root + "/" C2C_POLICY_MAP_NAME).c_str()), 0);
  ::close(fd);
  auto m = PinnedMaps::open(opts);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().find("value_size is 104"), std::string::npos) << m.error();
  EXPECT_NE(m.error().find("expects 112"), std::string::npos) << m.error();
  EXPECT_NE(m.error().find(root + "/" C2C_POLICY_MAP_NAME), std::string::npos) << m.error();
  struct stat st;
  EXPECT_NE(::stat((root + "/" C2C_STATS_MAP_NAME).c_str(), &st), 0) << "nothing is created on a mismatch";
}

TEST_F(MirrorPinned, RefusesAPinWithoutBtf) {
  ASSERT_EQ(::mkdir(root.c_str(), 0700), 0);
  int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "c2c_policy", 4, sizeof(c2c_policy_value), C2C_POLICY_MAX_ENTRIES,
                          nullptr);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(bpf_obj_pin(fd, (root + "/" C2C_POLICY_MAP_NAME).c_str()), 0);
  ::close(fd);
  auto m = PinnedMaps::open(opts);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().find("no BTF"), std::string::npos) << m.error();
}

TEST_F(MirrorPinned, RefusesAnotherAbiVersion) {
  {
    auto maps = open_ok(opts);
    ASSERT_TRUE(maps);
    c2c_meta meta{99, sizeof(c2c_policy_value), C2C_POLICY_MAX_ENTRIES, 0};
    __u32 key = 0;
    ASSERT_EQ(bpf_map_update_elem(maps->meta_fd(), &key, &meta, BPF_ANY), 0);
  }
  auto m = PinnedMaps::open(opts);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().find("abi_version is 99"), std::string::npos) << m.error();
}

TEST_F(MirrorPinned, RefusesAnotherSizeAndMissingPinsForAConsumer) {
  PinOptions consumer = opts;
  consumer.create = false;
  auto none = PinnedMaps::open(consumer);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("missing"), std::string::npos) << none.error();

  PinOptions small = opts;
  small.policy_max_entries = 64;
  ASSERT_TRUE(open_ok(small));
  auto m = PinnedMaps::open(opts);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().find("max_entries is 64"), std::string::npos) << m.error();
  consumer.policy_max_entries = 64;
  EXPECT_TRUE(open_ok(consumer)) << "a consumer re-opens a complete, matching set";
}

// Issue 13: the task-event ring buffer has the size the caller wants (the daemon's
// task_event_buffer, else derived from pid_max). A pinned one of another size is replaced when
// creating (it holds nothing that must outlive its consumer; the other maps stay), refused for a
// consumer; an invalid size is refused naming the option, changing nothing.
TEST_F(MirrorPinned, TheEventsRingBufferHasTheWantedSizeAndIsReplacedWhenItDiffers) {
  auto ring_bytes = [](int fd) {
    bpf_map_info info;
    std::memset(&info, 0, sizeof info);
    __u32 len = sizeof info;
    EXPECT_EQ(bpf_map_get_info_by_fd(fd, &info, &len), 0);
    EXPECT_EQ(info.type, BPF_MAP_TYPE_RINGBUF);
    return info.max_entries;
  };
  opts.events_ringbuf_bytes = 4u << 20;
  auto maps = open_ok(opts);
  ASSERT_TRUE(maps);
  EXPECT_EQ(ring_bytes(maps->events_fd()), 4u << 20);
  EXPECT_EQ(maps->events_resized_from(), 0u);
  const uint32_t policy_id = map_id(maps->policy_fd());
  const uint32_t old_ring = map_id(maps->events_fd());
  maps.reset();

  PinOptions consumer = opts;
  consumer.create = false;
  consumer.events_ringbuf_bytes = 2u << 20;
  auto refused = PinnedMaps::open(consumer);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("max_entries is 4194304"), std::string::npos) << refused.error();

  PinOptions invalid = opts;
  invalid.events_ringbuf_bytes = 3u << 20;
  auto bad = PinnedMaps::open(invalid);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("events_ringbuf_bytes"), std::string::npos) << bad.error();

  PinOptions bigger = opts;
  bigger.events_ringbuf_bytes = 8u << 20;
  auto again = open_ok(bigger);
  ASSERT_TRUE(again);
  EXPECT_EQ(ring_bytes(again->events_fd()), 8u << 20);
  EXPECT_EQ(again->events_resized_from(), 4u << 20);
  EXPECT_NE(map_id(again->events_fd()), old_ring);
  EXPECT_EQ(map_id(again->policy_fd()), policy_id) << "the policy map (and its entries) stays";
  const int pinned = bpf_obj_get((root + "/" C2C_EVENTS_MAP_NAME).c_str());
  ASSERT_GE(pinned, 0);
  EXPECT_EQ(map_id(pinned), map_id(again->events_fd())) << "the new ring buffer is the pinned one";
  ::close(pinned);
}

TEST_F(MirrorPinned, BpftoolInjectedEntriesArePrunedByAReconcile) {
  auto maps = open_ok(opts);
  ASSERT_TRUE(maps);
  KernelPolicyMap map(maps->policy_fd(), maps->policy_max_entries());
  Applier a(map);
  const DesiredTable desired = synthetic_table(1, 100, 5);  // tids 1050..1149
  ASSERT_TRUE(a.apply(diff_plan(desired, read_all(a), false)).ok());

  // Two unexplained tids and one desired tid overwritten by hand.
  for (uint32_t tid : {50u, 51u, 1060u}) {
    c2c_policy_value v;
    std::memset(&v, 0, sizeof v);
    v.start_ticks = 77;
    v.exec_class = C2C_CLASS_LATENCY_CRITICAL;
    c2c_task_key k{tid};
    int status = 0;
    std::string out = run("bpftool map update pinned " + root + "/" C2C_POLICY_MAP_NAME " key hex " +
                              hex_bytes(&k, sizeof k) + " value hex " + hex_bytes(&v, sizeof v),
                          &status);
    ASSERT_EQ(status, 0) << out;
  }
  auto seen = a.read_actual();
  ASSERT_TRUE(seen.ok()) << seen.error();
  EXPECT_EQ(seen->entries.size(), 102u);
  EXPECT_EQ(seen->warnings.size(), 3u) << "entries not written by the mirror are flagged";

  // While the desired state is loading, nothing is pruned.
  Plan loading = diff_plan(desired, seen->entries, true);
  EXPECT_EQ(loading.deferred_deletes, (std::vector<uint32_t>{50, 51}));
  ApplyReport rep = a.apply(loading);
  ASSERT_TRUE(rep.ok()) << rep.error;
  EXPECT_EQ(read_all(a).size(), 102u);

  // Once loaded, a reconcile prunes the injected entries and repairs the overwritten one.
  Plan full = diff_plan(desired, read_all(a), false);
  ASSERT_EQ(full.ops.size(), 2u);
  rep = a.apply(full);
  ASSERT_TRUE(rep.ok()) << rep.error;
  EXPECT_EQ(rep.applied, 2u);
  expect_equal(read_all(a), desired);
  EXPECT_TRUE(diff_plan(desired, read_all(a), false).ops.empty()) << "converged";
}

// The kernel's compare-and-delete (policy_maps.bpf.c, loaded by PinnedMaps::open) over more keys
// than one run holds: the expected entries go, another task's entry and a newer write stay
// (INV-2, INV-3), an absent key is success; nothing reads the map to decide.
TEST_F(MirrorPinned, DeletesAreComparedAndMadeInTheKernel) {
  auto maps = open_ok(opts);
  ASSERT_TRUE(maps);
  ASSERT_NE(maps->compare_delete(), nullptr) << maps->compare_delete_error();
  KernelPolicyMap map(maps->policy_fd(), maps->policy_max_entries(), maps->compare_delete());
  Applier a(map);
  const uint32_t n = 2 * C2C_COMPARE_DELETE_SLOTS + 100;
  const DesiredTable desired = synthetic_table(3, n, 5);
  ASSERT_TRUE(a.apply(diff_plan(desired, {}, false)).ok());

  Plan plan;
  uint32_t other_task = 0, newer = 0;
  for (const auto& [tid, v] : desired) {
    RuntimeValue want = v;
    if (other_task == 0) {
      other_task = tid;
      want.start += 1;  // the op expects another task than the one the entry holds
    } else if (newer == 0) {
      newer = tid;
      want.generation = 4;  // the entry was written at 5: newer than the op knows
    }
    plan.ops.push_back({PlanOp::Kind::Delete, tid, want, "test"});
  }
  const uint32_t absent = 7;  // below synthetic_table's tids
  ASSERT_EQ(desired.count(absent), 0u);
  plan.ops.push_back({PlanOp::Kind::Delete, absent, desired.begin()->second, "test"});
  std::sort(plan.ops.begin(), plan.ops.end(), [](const PlanOp& x, const PlanOp& y) { return x.tid < y.tid; });

  ApplyReport rep = a.apply(plan);
  EXPECT_EQ(rep.compared_in_kernel, n + 1u) << "every delete decided in the kernel";
  EXPECT_EQ(rep.applied, n - 2u);
  EXPECT_EQ(rep.absent, 1u);
  EXPECT_EQ(rep.skipped, 2u);
  for (const auto& s : rep.ops) {
    if (s.tid == other_task) {
      EXPECT_NE(s.reason.find("INV-2"), std::string::npos) << describe(s);
    }
    if (s.tid == newer) {
      EXPECT_NE(s.reason.find("generation 5 > expected 4"), std::string::npos) << describe(s);
    }
  }
  const auto left = read_all(a);
  ASSERT_EQ(left.size(), 2u);
  for (const auto& e : left) {
    EXPECT_TRUE(e.tid == other_task || e.tid == newer) << e.tid;
    EXPECT_EQ(e.value, desired.at(e.tid)) << "kept as it was";
  }
}

TEST_F(MirrorPinned, FullMapFailsClosed) {
  opts.policy_max_entries = 64;
  auto maps = open_ok(opts);
  ASSERT_TRUE(maps);
  KernelPolicyMap map(maps->policy_fd(), maps->policy_max_entries());
  Applier a(map);
  const DesiredTable before = synthetic_table(0, 40, 2);  // tids 1000..1039
  ASSERT_TRUE(a.apply(diff_plan(before, {}, false)).ok());

  DesiredTable grown = before;
  for (const auto& [tid, v] : synthetic_table(0, 30, 3)) grown[tid + 5000] = v;  // 30 new tids
  ApplyReport rep = a.apply(diff_plan(grown, read_all(a), false));
  EXPECT_TRUE(rep.map_full);
  EXPECT_FALSE(rep.ok());
  EXPECT_NE(rep.error.find("map full (64/64)"), std::string::npos) << rep.error;
  EXPECT_EQ(rep.rolled_back, 24u) << "the 24 adds that fit were undone";
  EXPECT_EQ(rep.failed, 6u);
  for (const auto& s : rep.ops) EXPECT_NE(s.reason.find("map full (64/64)"), std::string::npos) << describe(s);
  expect_equal(read_all(a), before);  // no half-applied table is visible
}

}  // namespace
}  // namespace c2c::mirror

// Executes a core Plan against the policy map and reads the map back (the "actual" table).
//
// Order and guarantees of apply():
//  1. The plan is validated first (tid 0, duplicate tids, a tid both in an op and in
//     deferred_deletes, unknown class or flag bits); an invalid plan changes nothing.
//  2. deferred_deletes are never executed: the desired state is still loading after a restart
//     and nothing is pruned before it is complete (INV-7). They are echoed in the report.
//  3. Deletes first (they free room). Compare before delete: the entry is deleted only if its
//     start_ticks equals the op's expected value (else the tid now holds another task, INV-2)
//     and its generation is not newer than the op's (else a newer write landed, INV-3): one rule,
//     c2c_delete_verdict (bpf/policy_compare_delete.h). Where the map can (the kernel map with
//     PolicyCompareDelete loaded), the kernel compares and deletes each key in one program run
//     per 8192 keys; otherwise the entries are read (one lookup each, or one read of the whole
//     map for many) and the matching ones deleted in batches. "Not found" is success (the entry
//     is already gone). A concurrent writer could still slip in between the compare and the
//     delete (one key's lookup in the kernel, the whole read here); the daemon is the map's only
//     writer (the scheduler only reads it), so this window is not reachable in the product.
//  4. Updates, then Adds, with BPF_ANY writes: re-applying a plan is idempotent.
//  Writes and deletes use the kernel's batch calls; a batch stops at the first failing key, which
//  is then retried on its own with capped exponential backoff (transient errors only) before the
//  batch resumes after it. If the kernel refuses batching, every key goes one by one.
//
// Map full fails closed: when a write hits E2BIG/ENOSPC, no further write is attempted, every
// Add this apply already wrote is deleted again (compare before delete: only if it still holds
// what we wrote), and all of them report "map full (N/max)". Those tasks then have no entry and
// run on the scheduler's default path: unboosted (INV-8) and on their own cpuset (INV-6), i.e.
// no half-applied set of new policy entries is ever visible. Deletes and Updates that already
// landed stay: they only narrow or refresh entries that existed before the apply.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/runtime_entry.hpp"
#include "mirror/map_io.hpp"
#include "mirror/result.hpp"
#include "mirror/retry.hpp"

namespace c2c::mirror {

enum class OpState : uint8_t {
  Applied,     // written, or deleted
  Absent,      // a Delete whose entry was already gone: success
  Skipped,     // a Delete refused by compare-before-delete (the reason says why)
  Failed,      // not applied; err and reason say why
  RolledBack,  // an Add undone because the map filled up (fail closed)
};
const char* to_string(OpState s);

struct OpStatus {
  uint32_t tid = 0;
  PlanOp::Kind kind = PlanOp::Kind::Add;
  OpState state = OpState::Failed;
  unsigned attempts = 0;  // kernel calls made for this key alone (a batch counts as one)
  int err = 0;            // errno of the last failure, 0 if none
  std::string reason;     // empty when Applied
  bool success() const { return state == OpState::Applied || state == OpState::Absent; }
};
// One line for people: "tid 42 add: failed (E2BIG): map full (64/64)".
std::string describe(const OpStatus& s);

struct ApplyOptions {
  RetryPolicy retry;
  size_t batch_size = 8192;  // keys per batch call
  bool use_batch = true;     // false: one call per key (also the automatic fallback)
  size_t read_chunk = 4096;  // entries per lookup_batch call: what the read buffers hold
  // From this many deletes on, compare-before-delete uses one fresh read of the whole map
  // instead of one lookup per key.
  size_t snapshot_compare_min = 256;
};

struct ApplyReport {
  std::vector<OpStatus> ops;          // one per plan op, in plan order
  std::vector<uint32_t> deferred;     // the plan's deferred deletes, not executed
  size_t applied = 0, absent = 0, skipped = 0, failed = 0, rolled_back = 0;
  bool map_full = false;
  bool batched = false;               // batch calls were used (false after a fallback)
  size_t compared_in_kernel = 0;      // deletes the map's compare_delete decided (the rest: read here)
  std::string error;                  // invalid plan (nothing done), or the map-full summary
  bool ok() const { return error.empty() && failed == 0 && rolled_back == 0; }
};

struct ReadResult {
  std::vector<ActualEntry> entries;   // sorted by tid
  std::vector<std::string> warnings;  // entries not laid out for this ABI (injected by hand?)
  bool batched = false;
};

// nullopt if the plan may be executed, else the offending field and why ("plan.ops[3].tid: ...").
std::optional<std::string> validate_plan(const Plan& plan);

// A walk over the whole map a chunk at a time (Applier::read_next), for a reader that spreads it
// over many turns while the map changes. A hash map's batch token is a bucket index and an entry
// never changes buckets, so the walk reads every bucket once: an entry left alone meanwhile is
// read exactly once; one written or deleted meanwhile may be read before or after its change, or
// (written into a bucket already read) not at all.
struct MapWalk {
  uint64_t token = 0;    // where the next chunk starts
  bool started = false;
  bool done = false;
};

class Applier {
 public:
  Applier(PolicyMapIo& map, ApplyOptions opts = {}, Sleeper sleep = {});
  ApplyReport apply(const Plan& plan);
  // The whole map: lookup_batch, else get_next_key iteration (keys first, then lookups).
  Result<ReadResult> read_actual();
  // Only these keys, one lookup each (a key not in the map is left out): for a read-back of a
  // few keys in a large map, where one batched pass over the whole map would cost O(map).
  Result<ReadResult> read_keys(const std::vector<uint32_t>& tids);
  // The walk's next chunk (ApplyOptions::read_chunk entries, in no order); walk.done after the
  // last. A map without batch calls is read whole by the first call.
  Result<ReadResult> read_next(MapWalk& walk);
  // What the whole-map read buffers hold now: one chunk (ApplyOptions::read_chunk), whatever the
  // map's size (more only while a bucket holds more than a chunk). A whole-map read keeps what it
  // read in memory it frees when done: the daemon does not hold ~116 B per entry the map ever held.
  size_t read_buffer_entries() const { return raw_cap_; }

 private:
  int with_retry(OpStatus& st, const std::function<int()>& call);
  void delete_keys(const std::vector<size_t>& idx, const Plan& plan, ApplyReport& rep);
  // The map's own compare-and-delete; returns the ops it did not decide (all, where it cannot).
  std::vector<size_t> delete_compared_in_kernel(const std::vector<size_t>& idx, const Plan& plan, ApplyReport& rep);
  // Compare against lookups or one read of the whole map, then batch deletes.
  void delete_compared_here(const std::vector<size_t>& idx, const Plan& plan, ApplyReport& rep);
  // Writes values[k] for op idx[k]; returns the op index that hit a full map, or nullopt.
  std::optional<size_t> write_keys(const std::vector<size_t>& idx, const std::vector<c2c_policy_value>& values,
                                   ApplyReport& rep);
  // vals[k] is what was written for op adds[k].
  void fail_closed(size_t full_at, const std::vector<size_t>& pending, const std::vector<size_t>& adds,
                   const std::vector<c2c_policy_value>& vals, ApplyReport& rep);

  // Reads the whole map a chunk at a time into raw_keys_/raw_vals_, calling visit(tid, value) for
  // each entry read; "" or the error.
  using Visit = std::function<void(uint32_t, const c2c_policy_value&)>;
  std::string read_each(bool* batched, const Visit& visit);
  int read_batch(const uint64_t* in, uint64_t* next, const Visit& visit, std::string* why);
  void fit_read_buffers(size_t entries);  // exactly `entries` (a chunk), unless already so

  PolicyMapIo& map_;
  ApplyOptions opts_;
  Sleeper sleep_;
  bool batch_ok_ = true;
  bool kernel_compare_ok_ = true;  // false once the map answered EOPNOTSUPP to compare_delete
  std::unique_ptr<uint32_t[]> raw_keys_;
  std::unique_ptr<c2c_policy_value[]> raw_vals_;
  size_t raw_cap_ = 0;
};

}  // namespace c2c::mirror

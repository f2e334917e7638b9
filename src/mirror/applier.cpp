#include "mirror/applier.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "kernel/errno_text.hpp"
#include "mirror/policy_value.hpp"

namespace c2c::mirror {

using kernel::errno_text;

namespace {

constexpr int kENOTSUPP = 524;  // the kernel-internal "operation not supported" some paths leak

// Errors with which the kernel says "this map does not do batches" on the first call.
bool batch_unsupported(int err) { return err == EINVAL || err == EOPNOTSUPP || err == kENOTSUPP; }
bool map_full_err(int err) { return err == E2BIG || err == ENOSPC; }

const char* kind_name(PlanOp::Kind k) {
  switch (k) {
    case PlanOp::Kind::Add: return "add";
    case PlanOp::Kind::Update: return "update";
    case PlanOp::Kind::Delete: return "delete";
  }
  return "?";
}

std::string err_name(int err) {
  switch (err) {
    case E2BIG: return "E2BIG";
    case ENOSPC: return "ENOSPC";
    case ENOENT: return "ENOENT";
    case EAGAIN: return "EAGAIN";
    case EBUSY: return "EBUSY";
    case ENOMEM: return "ENOMEM";
    case EINVAL: return "EINVAL";
    case EPERM: return "EPERM";
    default: return "errno " + std::to_string(err);
  }
}

bool same_bytes(const c2c_policy_value& a, const c2c_policy_value& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;  // the struct has no padding (ABI static_asserts)
}

void real_sleep(std::chrono::nanoseconds d) { std::this_thread::sleep_for(d); }

// What a slot holds until the kernel writes its verdict (no verdict means 0, "deleted").
constexpr int32_t kNoVerdict = INT32_MIN;

// A delete that compare-before-delete refused (c2c_delete_verdict), in the report's words.
void keep_other_task(OpStatus& st, uint64_t held_start, uint64_t want_start) {
  st.state = OpState::Skipped;
  st.reason = "tid now holds another task (start_ticks " + std::to_string(held_start) + ", expected " +
              std::to_string(want_start) + "); not deleted (INV-2)";
}
void keep_newer_write(OpStatus& st, uint64_t held_generation, uint64_t want_generation) {
  st.state = OpState::Skipped;
  st.reason = "a newer write landed (generation " + std::to_string(held_generation) + " > expected " +
              std::to_string(want_generation) + "); not deleted (INV-3)";
}

}  // namespace

const char* to_string(OpState s) {
  switch (s) {
    case OpState::Applied: return "applied";
    case OpState::Absent: return "absent";
    case OpState::Skipped: return "skipped";
    case OpState::Failed: return "failed";
    case OpState::RolledBack: return "rolled back";
  }
  return "?";
}

std::string describe(const OpStatus& s) {
  std::string out = "tid " + std::to_string(s.tid) + " " + kind_name(s.kind) + ": " + to_string(s.state);
  if (s.err != 0) out += " (" + err_name(s.err) + ")";
  if (!s.reason.empty()) out += ": " + s.reason;
  return out;
}

std::optional<std::string> validate_plan(const Plan& plan) {
  std::unordered_map<uint32_t, size_t> seen;
  seen.reserve(plan.ops.size());
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const PlanOp& op = plan.ops[i];
    const std::string field = "plan.ops[" + std::to_string(i) + "]";
    if (op.tid == 0) return field + ".tid: 0 is not a task";
    if (auto [it, fresh] = seen.emplace(op.tid, i); !fresh)
      return field + ".tid: tid " + std::to_string(op.tid) + " already has plan.ops[" + std::to_string(it->second) +
             "]; a plan holds at most one op per tid";
    if (op.kind != PlanOp::Kind::Delete) {
      if (auto why = check_writable(op.value)) return field + "." + *why;
    }
  }
  for (size_t k = 0; k < plan.deferred_deletes.size(); ++k) {
    uint32_t tid = plan.deferred_deletes[k];
    if (auto it = seen.find(tid); it != seen.end())
      return "plan.deferred_deletes[" + std::to_string(k) + "]: tid " + std::to_string(tid) +
             " also has plan.ops[" + std::to_string(it->second) + "]";
  }
  return std::nullopt;
}

Applier::Applier(PolicyMapIo& map, ApplyOptions opts, Sleeper sleep)
    : map_(map), opts_(opts), sleep_(sleep ? std::move(sleep) : Sleeper(real_sleep)), batch_ok_(opts.use_batch) {
  if (opts_.batch_size == 0) opts_.batch_size = 1;
}

int Applier::with_retry(OpStatus& st, const std::function<int()>& call) {
  int err = 0;
  const unsigned max = std::max(1u, opts_.retry.max_attempts);
  for (unsigned attempt = 0; attempt < max; ++attempt) {
    ++st.attempts;
    err = call();
    if (err == 0 || !is_transient(err)) return err;
    if (attempt + 1 < max) sleep_(backoff_delay(opts_.retry, attempt));
  }
  return err;
}

ApplyReport Applier::apply(const Plan& plan) {
  ApplyReport rep;
  rep.deferred = plan.deferred_deletes;
  if (auto why = validate_plan(plan)) {
    rep.error = "invalid plan, nothing applied: " + *why;
    return rep;
  }
  rep.ops.resize(plan.ops.size());
  std::vector<size_t> deletes, updates, adds;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const PlanOp& op = plan.ops[i];
    rep.ops[i].tid = op.tid;
    rep.ops[i].kind = op.kind;
    switch (op.kind) {
      case PlanOp::Kind::Delete: deletes.push_back(i); break;
      case PlanOp::Kind::Update: updates.push_back(i); break;
      case PlanOp::Kind::Add: adds.push_back(i); break;
    }
  }
  // The encoded values, in the order each phase writes them (kept for a fail-closed rollback).
  auto encode = [&](const std::vector<size_t>& idx) {
    std::vector<c2c_policy_value> out(idx.size());
    for (size_t k = 0; k < idx.size(); ++k) out[k] = to_abi(plan.ops[idx[k]].value);
    return out;
  };
  const std::vector<c2c_policy_value> upd_vals = encode(updates), add_vals = encode(adds);

  delete_keys(deletes, plan, rep);
  std::optional<size_t> full = write_keys(updates, upd_vals, rep);
  if (!full) full = write_keys(adds, add_vals, rep);
  if (full) {
    // Everything after the failing key in its phase, and every Add if it was the Update phase.
    std::vector<size_t> pending;
    for (size_t i : updates)
      if (i != *full && rep.ops[i].attempts == 0) pending.push_back(i);
    for (size_t i : adds)
      if (i != *full && rep.ops[i].attempts == 0) pending.push_back(i);
    fail_closed(*full, pending, adds, add_vals, rep);
  }

  rep.batched = batch_ok_;
  for (const OpStatus& s : rep.ops) {
    switch (s.state) {
      case OpState::Applied: ++rep.applied; break;
      case OpState::Absent: ++rep.absent; break;
      case OpState::Skipped: ++rep.skipped; break;
      case OpState::Failed: ++rep.failed; break;
      case OpState::RolledBack: ++rep.rolled_back; break;
    }
  }
  return rep;
}

void Applier::delete_keys(const std::vector<size_t>& idx, const Plan& plan, ApplyReport& rep) {
  // The kernel compares and deletes where the map can (PolicyMapIo::compare_delete); the keys it
  // did not decide are compared here.
  delete_compared_here(delete_compared_in_kernel(idx, plan, rep), plan, rep);
}

std::vector<size_t> Applier::delete_compared_in_kernel(const std::vector<size_t>& idx, const Plan& plan,
                                                       ApplyReport& rep) {
  if (idx.empty() || !kernel_compare_ok_) return idx;
  std::vector<c2c_compare_delete_slot> slots(idx.size());
  for (size_t k = 0; k < idx.size(); ++k) {
    const RuntimeValue& want = plan.ops[idx[k]].value;
    slots[k] = {rep.ops[idx[k]].tid, kNoVerdict, want.start, want.generation};
  }
  const BatchResult r = map_.compare_delete(slots.data(), slots.size());
  if (r.err == EOPNOTSUPP && r.done == 0) {
    kernel_compare_ok_ = false;  // this map cannot: not asked again
    return idx;
  }
  std::vector<size_t> rest;
  for (size_t k = 0; k < idx.size(); ++k) {
    OpStatus& st = rep.ops[idx[k]];
    const c2c_compare_delete_slot& s = slots[k];
    // Not reached (a failed run), a delete the kernel refused (not "not found") or a verdict this
    // build does not know: compared and deleted again below, with the retries of a key on its own.
    const bool known = s.verdict == -ENOENT || (s.verdict >= C2C_DELETE_OK && s.verdict <= C2C_DELETE_ABSENT);
    if (k >= r.done || !known) {
      rest.push_back(idx[k]);
      continue;
    }
    ++st.attempts;
    ++rep.compared_in_kernel;
    const RuntimeValue& want = plan.ops[idx[k]].value;
    switch (s.verdict) {
      case C2C_DELETE_OK: st.state = OpState::Applied; break;
      case C2C_DELETE_OTHER_TASK: keep_other_task(st, s.start_ticks, want.start); break;
      case C2C_DELETE_NEWER: keep_newer_write(st, s.generation, want.generation); break;
      default:  // C2C_DELETE_ABSENT, or -ENOENT: gone between the program's lookup and delete
        st.state = OpState::Absent;
        st.reason = "already gone";
    }
  }
  return rest;
}

void Applier::delete_compared_here(const std::vector<size_t>& idx, const Plan& plan, ApplyReport& rep) {
  if (idx.empty()) return;
  // Compare before delete: read each entry and keep only those still holding the expected task.
  // Many deletes compare against one fresh batched read of the map instead of one lookup
  // syscall each; both read the map just before deleting, so the guarantee is the same.
  // What the compare needs of each entry: the task's start and the generation.
  struct Held {
    uint64_t start_ticks, generation;
  };
  std::vector<uint64_t> snapshot;  // (tid << 32 | index into held), sorted
  std::vector<Held> held;
  bool batched_read = false;
  const bool use_snapshot =
      idx.size() >= opts_.snapshot_compare_min && read_each(&batched_read, [&](uint32_t tid, const c2c_policy_value& v) {
        snapshot.push_back((uint64_t{tid} << 32) | held.size());
        held.push_back({v.start_ticks, v.generation});
      }).empty();
  if (use_snapshot) std::sort(snapshot.begin(), snapshot.end());
  auto current = [&](uint32_t tid, c2c_policy_value* out) {
    auto it = std::lower_bound(snapshot.begin(), snapshot.end(), uint64_t{tid} << 32);
    if (it == snapshot.end() || (*it >> 32) != tid) return ENOENT;
    const Held& h = held[*it & 0xffffffffu];
    out->start_ticks = h.start_ticks;
    out->generation = h.generation;
    return 0;
  };
  std::vector<size_t> doomed;
  doomed.reserve(idx.size());
  for (size_t i : idx) {
    OpStatus& st = rep.ops[i];
    const RuntimeValue& want = plan.ops[i].value;
    c2c_policy_value cur;
    int err = use_snapshot ? current(st.tid, &cur) : with_retry(st, [&] { return map_.lookup(st.tid, &cur); });
    if (err == ENOENT) {
      st.state = OpState::Absent;
      st.reason = "already gone";
    } else if (err != 0) {
      st.state = OpState::Failed;
      st.err = err;
      st.reason = "lookup before delete failed: " + errno_text(err);
    } else {
      switch (c2c_delete_verdict(cur.start_ticks, cur.generation, want.start, want.generation)) {
        case C2C_DELETE_OTHER_TASK: keep_other_task(st, cur.start_ticks, want.start); break;
        case C2C_DELETE_NEWER: keep_newer_write(st, cur.generation, want.generation); break;
        default: doomed.push_back(i);
      }
    }
  }

  std::vector<uint32_t> keys(doomed.size());
  for (size_t k = 0; k < doomed.size(); ++k) keys[k] = rep.ops[doomed[k]].tid;
  auto one_by_one = [&](size_t k) {
    OpStatus& st = rep.ops[doomed[k]];
    int err = with_retry(st, [&] { return map_.remove(st.tid); });
    if (err == 0) {
      st.state = OpState::Applied;
    } else if (err == ENOENT) {
      st.state = OpState::Absent;
      st.reason = "already gone";
    } else {
      st.state = OpState::Failed;
      st.err = err;
      st.reason = "delete failed: " + errno_text(err);
    }
  };
  size_t pos = 0;
  bool first_call = true;
  while (pos < keys.size()) {
    if (!batch_ok_) {
      one_by_one(pos++);
      continue;
    }
    size_t n = std::min(opts_.batch_size, keys.size() - pos);
    BatchResult r = map_.delete_batch(keys.data() + pos, n);
    const bool was_first = first_call;
    first_call = false;
    r.done = std::min(r.done, n);
    for (size_t k = pos; k < pos + r.done; ++k) {
      rep.ops[doomed[k]].state = OpState::Applied;
      ++rep.ops[doomed[k]].attempts;
    }
    pos += r.done;
    if (r.err == 0) {
      if (r.done == 0) batch_ok_ = false;  // no progress and no error: do not spin
      continue;
    }
    if (pos >= keys.size()) break;
    if (r.err == ENOENT) {  // gone since our lookup: success
      OpStatus& st = rep.ops[doomed[pos]];
      ++st.attempts;
      st.state = OpState::Absent;
      st.reason = "already gone";
      ++pos;
      continue;
    }
    if (was_first && r.done == 0 && batch_unsupported(r.err)) {
      batch_ok_ = false;  // retry this key and all others one by one
      continue;
    }
    one_by_one(pos++);  // the failing key alone, with retries; then the batch resumes after it
  }
}

std::optional<size_t> Applier::write_keys(const std::vector<size_t>& idx,
                                          const std::vector<c2c_policy_value>& values, ApplyReport& rep) {
  std::vector<uint32_t> keys(idx.size());
  for (size_t k = 0; k < idx.size(); ++k) keys[k] = rep.ops[idx[k]].tid;
  // Returns true when the map is full at key k.
  auto one_by_one = [&](size_t k) {
    OpStatus& st = rep.ops[idx[k]];
    int err = with_retry(st, [&] { return map_.update(st.tid, values[k]); });
    if (err == 0) {
      st.state = OpState::Applied;
      return false;
    }
    st.state = OpState::Failed;
    st.err = err;
    st.reason = "write failed: " + errno_text(err);
    return map_full_err(err);
  };
  size_t pos = 0;
  bool first_call = true;
  while (pos < keys.size()) {
    if (!batch_ok_) {
      if (one_by_one(pos)) return idx[pos];
      ++pos;
      continue;
    }
    size_t n = std::min(opts_.batch_size, keys.size() - pos);
    BatchResult r = map_.update_batch(keys.data() + pos, values.data() + pos, n);
    const bool was_first = first_call;
    first_call = false;
    r.done = std::min(r.done, n);
    for (size_t k = pos; k < pos + r.done; ++k) {
      rep.ops[idx[k]].state = OpState::Applied;
      ++rep.ops[idx[k]].attempts;
    }
    pos += r.done;
    if (r.err == 0) {
      if (r.done == 0) batch_ok_ = false;
      continue;
    }
    if (pos >= keys.size()) break;
    if (map_full_err(r.err)) {
      OpStatus& st = rep.ops[idx[pos]];
      ++st.attempts;
      st.state = OpState::Failed;
      st.err = r.err;
      return idx[pos];
    }
    if (was_first && r.done == 0 && batch_unsupported(r.err)) {
      batch_ok_ = false;
      continue;
    }
    if (one_by_one(pos)) return idx[pos];
    ++pos;
  }
  return std::nullopt;
}

void Applier::fail_closed(size_t full_at, const std::vector<size_t>& pending, const std::vector<size_t>& adds,
                          const std::vector<c2c_policy_value>& vals, ApplyReport& rep) {
  // Count before rolling back: the figure shows how full the map was when the write failed.
  size_t used = 0;
  if (auto now = read_actual()) used = now->entries.size();
  const std::string full = "map full (" + std::to_string(used) + "/" + std::to_string(map_.max_entries()) + ")";

  rep.map_full = true;
  rep.ops[full_at].reason = full + ": not written";
  if (rep.ops[full_at].err == 0) rep.ops[full_at].err = E2BIG;
  for (size_t i : pending) {
    rep.ops[i].state = OpState::Failed;
    rep.ops[i].err = E2BIG;
    rep.ops[i].reason = full + ": not attempted";
  }
  size_t undone = 0;
  for (size_t k = 0; k < adds.size(); ++k) {
    OpStatus& st = rep.ops[adds[k]];
    if (st.state != OpState::Applied) continue;
    c2c_policy_value cur;
    int err = with_retry(st, [&] { return map_.lookup(st.tid, &cur); });
    if (err == 0 && !same_bytes(cur, vals[k])) continue;  // a newer write landed: not ours to undo
    if (err == 0) err = with_retry(st, [&] { return map_.remove(st.tid); });
    if (err == 0 || err == ENOENT) {
      st.state = OpState::RolledBack;
      st.err = E2BIG;
      st.reason = full + ": rolled back (fail closed)";
      ++undone;
    } else {
      st.state = OpState::Failed;
      st.err = err;
      st.reason = full + ": rollback failed: " + errno_text(err) + "; the entry stays";
    }
  }
  rep.error = full + ": " + std::to_string(undone) +
              " new entries rolled back and the rest not written; those tasks run on the scheduler's "
              "default path (fail closed)";
}

void Applier::fit_read_buffers(size_t entries) {
  if (raw_cap_ == entries) return;
  raw_keys_.reset(new uint32_t[entries]);
  // Default-initialised (not zeroed): pages are touched only where the kernel writes entries.
  raw_vals_.reset(new c2c_policy_value[entries]);
  raw_cap_ = entries;
}

// One lookup_batch call from `in` (nullptr: the map's start) into the read buffers, grown while
// one bucket holds more than they do, transient errors retried; visits what it read. Returns 0
// (more to read from *next), ENOENT (that was the end) or the error, with *why for people.
int Applier::read_batch(const uint64_t* in, uint64_t* next, const Visit& visit, std::string* why) {
  const size_t chunk = std::max<size_t>(opts_.read_chunk, 1);
  const size_t cap = std::max<size_t>(map_.max_entries(), 1);
  size_t step = chunk;
  unsigned transient = 0;
  while (true) {
    fit_read_buffers(step);
    uint32_t count = static_cast<uint32_t>(std::min<size_t>(step, UINT32_MAX));
    const int err = map_.lookup_batch(in, next, raw_keys_.get(), raw_vals_.get(), &count);
    if (err == 0 || err == ENOENT) {
      for (size_t k = 0; k < std::min<size_t>(count, step); ++k) visit(raw_keys_[k], raw_vals_[k]);
      fit_read_buffers(chunk);  // a bucket that needed more is behind us
      return err;
    }
    if (err == ENOSPC) {  // one bucket holds more than `step` entries: grow, read the step again
      if (step > 8 * cap + 1024) {
        *why = "lookup_batch: ENOSPC with a buffer of " + std::to_string(step) + " entries";
        return err;
      }
      step *= 2;
      continue;
    }
    if (is_transient(err) && ++transient < std::max(1u, opts_.retry.max_attempts)) {
      sleep_(backoff_delay(opts_.retry, transient - 1));
      continue;
    }
    *why = "reading the policy map (lookup_batch) failed: " + errno_text(err);
    return err;
  }
}

std::string Applier::read_each(bool* batched, const Visit& visit) {
  // One chunk at a time (ApplyOptions::read_chunk entries per lookup_batch call) into buffers of
  // that size, which stay allocated between reads: a reconcile every few seconds reads into
  // memory already mapped, and the daemon holds one chunk, not the whole map.
  bool use_batch = batch_ok_;
  if (use_batch) {
    uint64_t in = 0, next = 0;
    bool first = true;
    while (true) {
      std::string why;
      const int err = read_batch(first ? nullptr : &in, &next, visit, &why);
      if (err == ENOENT) break;
      if (err == 0) {
        in = next;
        first = false;
        continue;
      }
      if (first && batch_unsupported(err)) {
        use_batch = false;
        break;
      }
      return why;
    }
  }
  if (!use_batch) {
    // Keys first, then values: deleting or re-reading during get_next_key would restart it.
    std::vector<uint32_t> keys;
    std::unordered_set<uint32_t> seen;
    uint32_t prev = 0, key = 0;
    bool first = true;
    while (true) {
      int err = map_.next_key(first ? nullptr : &prev, &key);
      if (err == ENOENT) break;
      if (err != 0) return "reading the policy map (get_next_key) failed: " + errno_text(err);
      // A key deleted under us makes the kernel restart from the first key: skip repeats, and
      // stop if that never ends.
      if (seen.insert(key).second) keys.push_back(key);
      if (seen.size() > map_.max_entries()) return "reading the policy map: more keys than max_entries";
      prev = key;
      first = false;
    }
    for (uint32_t k : keys) {
      c2c_policy_value v;
      int err = map_.lookup(k, &v);
      if (err == ENOENT) continue;  // deleted since we saw its key
      if (err != 0) return "reading tid " + std::to_string(k) + " failed: " + errno_text(err);
      visit(k, v);
    }
  }
  *batched = use_batch;
  return "";
}

namespace {
// An entry read back, with a warning for one not laid out for this ABI (the first 20 named).
void add_entry(ReadResult& out, uint32_t tid, const c2c_policy_value& v, size_t& bad) {
  out.entries.push_back(ActualEntry{tid, from_abi(v)});
  if (auto why = check_decoded(v)) {
    if (++bad <= 20) out.warnings.push_back("tid " + std::to_string(tid) + ": " + *why);
  }
}
void end_warnings(ReadResult& out, size_t bad) {
  if (bad > 20) out.warnings.push_back("... and " + std::to_string(bad - 20) + " more entries not laid out for this ABI");
}
}  // namespace

Result<ReadResult> Applier::read_actual() {
  using R = Result<ReadResult>;
  ReadResult out;
  // What the read returns, kept until it is sorted and decoded (freed with this call).
  std::vector<c2c_policy_value> vals;
  std::vector<uint64_t> order;  // (tid << 32 | index into vals): sorted rather than 112-byte values
  const std::string e = read_each(&out.batched, [&](uint32_t tid, const c2c_policy_value& v) {
    order.push_back((uint64_t{tid} << 32) | vals.size());
    vals.push_back(v);
  });
  if (!e.empty()) return R::fail(e);
  std::sort(order.begin(), order.end());
  out.entries.reserve(order.size());
  size_t bad = 0;
  for (uint64_t o : order) {
    const uint32_t tid = static_cast<uint32_t>(o >> 32);
    const c2c_policy_value& v = vals[o & 0xffffffffu];
    if (!out.entries.empty() && out.entries.back().tid == tid) continue;  // a restarted walk
    add_entry(out, tid, v, bad);
  }
  end_warnings(out, bad);
  return R::ok(std::move(out));
}

Result<ReadResult> Applier::read_next(MapWalk& walk) {
  using R = Result<ReadResult>;
  ReadResult out;
  size_t bad = 0;
  if (walk.done) return R::ok(std::move(out));
  if (batch_ok_) {
    uint64_t next = 0;
    std::string why;
    const int err = read_batch(walk.started ? &walk.token : nullptr, &next,
                               [&](uint32_t tid, const c2c_policy_value& v) { add_entry(out, tid, v, bad); }, &why);
    if (err == 0 || err == ENOENT) {
      walk.token = next;
      walk.done = err == ENOENT;
      walk.started = true;
      out.batched = true;
      end_warnings(out, bad);
      return R::ok(std::move(out));
    }
    if (walk.started || !batch_unsupported(err)) return R::fail(why);
  }
  // No batch calls on this map: the whole map at once (get_next_key cannot resume a walk whose
  // last key was deleted meanwhile).
  walk.started = walk.done = true;
  return read_actual();
}

Result<ReadResult> Applier::read_keys(const std::vector<uint32_t>& tids) {
  using R = Result<ReadResult>;
  std::vector<uint32_t> keys(tids);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  ReadResult out;
  size_t bad = 0;
  for (uint32_t tid : keys) {
    c2c_policy_value v{};
    const int e = map_.lookup(tid, &v);
    if (e == ENOENT) continue;
    if (e != 0) return R::fail("lookup of tid " + std::to_string(tid) + ": " + errno_text(e));
    add_entry(out, tid, v, bad);
  }
  end_warnings(out, bad);
  return R::ok(std::move(out));
}

}  // namespace c2c::mirror

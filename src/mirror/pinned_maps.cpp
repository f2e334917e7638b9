#include "mirror/pinned_maps.hpp"

#include <bpf/libbpf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "host/bpf_object_path.hpp"
#include "host/events_ringbuf.hpp"
#include "kernel/bpf_object.hpp"
#include "kernel/errno_text.hpp"
#include "kernel/map_check.hpp"
#include "kernel/map_ops.hpp"
#include "kernel/pins.hpp"

namespace c2c::mirror {

std::string default_maps_object() {
  if (const char* env = std::getenv("C2C_POLICY_MAPS_OBJ"); env != nullptr && *env != '\0') return env;
  // Not found: the bare name, so the open error names the object (and find_bpf_object's list
  // of places tried is in the daemon's startup error through the mirror's message).
  if (auto p = host::find_bpf_object("policy_maps")) return p->string();
  return "policy_maps.bpf.o";
}

kernel::MapLayout policy_map_layout(std::optional<uint32_t> max_entries) {
  return {BPF_MAP_TYPE_HASH, sizeof(c2c_task_key), sizeof(c2c_policy_value), max_entries, 0, "c2c_policy_value"};
}

namespace {

using kernel::errno_text;
using kernel::UniqueFd;

// What each pinned map must look like for this build of the ABI (no flags on any of them).
struct Expected {
  const char* name;
  kernel::MapLayout layout;
};

enum MapIndex : size_t { kPolicy = 0, kStats = 1, kEvents = 2, kMeta = 3, kNumMaps = 4 };

std::array<Expected, kNumMaps> expectations(uint32_t policy_max, uint32_t events_bytes) {
  return {{
      {C2C_POLICY_MAP_NAME, policy_map_layout(policy_max)},
      {C2C_STATS_MAP_NAME, {BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(c2c_stats), 1, 0, "c2c_stats"}},
      {C2C_EVENTS_MAP_NAME, {BPF_MAP_TYPE_RINGBUF, 0, 0, events_bytes, 0, nullptr}},
      {C2C_META_MAP_NAME, {BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(c2c_meta), 1, 0, "c2c_meta"}},
  }};
}

constexpr const char* kRefusing = "; refusing to use it (remove the pin only if no scheduler is using it)";

std::string mismatch(const std::string& pin, const char* field, uint64_t is, uint64_t want) {
  return kernel::mismatch_text(pin, field, is, want) + kRefusing;
}

// Checks an open map fd against `e` (src/kernel's one map check); "" when it matches.
std::string verify(int fd, const Expected& e, const std::string& pin) {
  std::string why = kernel::check_map(fd, e.layout, pin);
  return why.empty() ? why : why + kRefusing;
}

// The size of the ring buffer behind fd when it is laid out as `e` wants except for its size
// (a valid one); 0 otherwise (then verify() says what is wrong, or nothing is).
uint32_t ring_of_other_size(int fd, const Expected& e, const std::string& pin) {
  const auto facts = kernel::map_facts(fd);
  if (!facts || facts->max_entries == e.layout.max_entries) return 0;
  if (host::events_ringbuf_bytes_problem(facts->max_entries)) return 0;
  Expected same = e;
  same.layout.max_entries = facts->max_entries;
  return verify(fd, same, pin).empty() ? facts->max_entries : 0;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Checks c2c_meta: a foreign ABI version is refused; 0 (never written) is fine here.
std::string verify_meta(int fd, const std::string& pin, uint32_t policy_max, bool* unwritten) {
  __u32 key = 0;
  c2c_meta m;
  std::memset(&m, 0, sizeof m);
  if (const int e = kernel::map_lookup(fd, &key, &m); e != 0)
    return "pinned map " + pin + ": cannot read element 0: " + errno_text(e);
  *unwritten = m.abi_version == 0;
  if (*unwritten) return "";
  if (m.abi_version != C2C_ABI_VERSION) return mismatch(pin, "abi_version", m.abi_version, C2C_ABI_VERSION);
  if (m.policy_value_size != sizeof(c2c_policy_value))
    return mismatch(pin, "policy_value_size", m.policy_value_size, sizeof(c2c_policy_value));
  if (m.policy_max_entries != policy_max)
    return mismatch(pin, "policy_max_entries", m.policy_max_entries, policy_max);
  return "";
}

// Creates the maps that are not pinned yet from the BPF object and pins them; libbpf re-uses
// the pinned ones (same checks as verify()) so that the object's fds cover all four.
Result<std::array<UniqueFd, kNumMaps>> create_missing(const PinOptions& opts,
                                                      const std::array<Expected, kNumMaps>& want) {
  using R = Result<std::array<UniqueFd, kNumMaps>>;
  if (std::string e = kernel::make_pin_dirs(opts.pin_root); !e.empty()) return R::fail(e);
  std::string err;
  kernel::BpfObject obj = kernel::BpfObject::open(opts.object_path, &err);
  if (!obj) return R::fail(err + " (set C2C_POLICY_MAPS_OBJ to policy_maps.bpf.o)");
  // Only the maps are made here; the program is loaded against them by PolicyCompareDelete.
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, obj.get()) bpf_program__set_autoload(prog, false);
  for (const Expected& e : want) {
    bpf_map* m = bpf_object__find_map_by_name(obj.get(), e.name);
    if (m == nullptr) {
      err = "BPF object " + opts.object_path + " has no map '" + e.name + "'";
      break;
    }
    std::string pin = opts.pin_root + "/" + e.name;
    int rc = bpf_map__set_pin_path(m, pin.c_str());
    // The policy map and the ring buffer are sized at run time (the object has the defaults).
    if (rc == 0 && (std::strcmp(e.name, C2C_POLICY_MAP_NAME) == 0 || std::strcmp(e.name, C2C_EVENTS_MAP_NAME) == 0))
      rc = bpf_map__set_max_entries(m, *e.layout.max_entries);
    if (rc != 0) {
      err = "cannot prepare map " + pin + ": " + errno_text(rc);
      break;
    }
  }
  if (err.empty()) {
    if (std::string e = obj.load(); !e.empty())
      err = "cannot create or re-use the pinned maps under " + opts.pin_root + ": " + e + " (see libbpf's message above)";
  }
  std::array<UniqueFd, kNumMaps> fds;
  if (err.empty()) {
    for (size_t i = 0; i < kNumMaps; ++i) {
      int fd = ::dup(bpf_map__fd(bpf_object__find_map_by_name(obj.get(), want[i].name)));
      if (fd < 0) {
        err = "dup of map fd failed: " + errno_text(errno);
        break;
      }
      fds[i] = UniqueFd(fd);
    }
  }
  // obj closes here: the pins and our dup'ed fds keep the maps alive.
  if (!err.empty()) return R::fail(err);
  return R::ok(std::move(fds));
}

}  // namespace

Result<std::unique_ptr<PinnedMaps>> PinnedMaps::open(const PinOptions& opts) {
  using R = Result<std::unique_ptr<PinnedMaps>>;
  if (opts.pin_root.empty() || opts.pin_root[0] != '/')
    return R::fail("pin_root: must be an absolute path under a bpffs mount, got '" + opts.pin_root + "'");
  if (opts.policy_max_entries == 0) return R::fail("policy_max_entries: must be > 0");
  if (auto p = host::events_ringbuf_bytes_problem(opts.events_ringbuf_bytes))
    return R::fail("events_ringbuf_bytes: " + *p);
  const auto want = expectations(opts.policy_max_entries, opts.events_ringbuf_bytes);

  // 1. Verify every existing pin before creating anything: a mismatch changes nothing.
  std::array<UniqueFd, kNumMaps> fds;
  bool missing = false;
  bool meta_unwritten = false;
  uint32_t resized_from = 0;
  for (size_t i = 0; i < kNumMaps; ++i) {
    std::string pin = opts.pin_root + "/" + want[i].name;
    if (!exists(pin)) {
      missing = true;
      continue;
    }
    kernel::OpenedPin opened = kernel::open_pin(pin);
    if (!opened.fd) return R::fail(opened.what);
    const int fd = opened.fd.get();
    fds[i] = std::move(opened.fd);
    if (i == kEvents && opts.create) {
      if (const uint32_t other = ring_of_other_size(fd, want[i], pin); other != 0) {
        resized_from = other;  // replaced below, once every other pin is verified
        continue;
      }
    }
    if (std::string e = verify(fd, want[i], pin); !e.empty()) return R::fail(e);
    if (i == kMeta) {
      if (std::string e = verify_meta(fd, pin, opts.policy_max_entries, &meta_unwritten); !e.empty())
        return R::fail(e);
    }
  }

  if (resized_from != 0) {
    // Only the ring buffer's size differs (task_event_buffer changed, or pid_max did). It holds
    // nothing that outlives its consumer (TaskEventStream discards what it finds at open) and only
    // the daemon's own task-event programs write into it (their links die with it), so it is
    // replaced by one of the wanted size.
    const std::string pin = opts.pin_root + "/" + want[kEvents].name;
    fds[kEvents] = UniqueFd();
    if (::unlink(pin.c_str()) != 0)
      return R::fail("pin " + pin + ": cannot replace the " + std::to_string(resized_from) +
                     "-byte ring buffer: " + errno_text(errno));
    missing = true;
  }
  auto maps = std::make_unique<PinnedMaps>();
  maps->pin_root_ = opts.pin_root;
  maps->events_resized_from_ = resized_from;
  maps->policy_max_entries_ = opts.policy_max_entries;
  if (missing) {
    if (!opts.create) return R::fail("pins under " + opts.pin_root + " are missing and create=false");
    auto created = create_missing(opts, want);
    if (!created) return R::fail(created.error());
    for (size_t i = 0; i < kNumMaps; ++i) {
      std::string pin = opts.pin_root + "/" + want[i].name;
      if (std::string e = verify(created.value()[i].get(), want[i], pin); !e.empty()) return R::fail(e);
    }
    fds = std::move(created.value());
    maps->created_ = true;
    meta_unwritten = true;
  }
  if (meta_unwritten) {
    // A fresh set, or a creator that died between pinning and this write.
    if (!opts.create) return R::fail("pinned map " + opts.pin_root + "/" C2C_META_MAP_NAME " was never written");
    c2c_meta m;
    std::memset(&m, 0, sizeof m);
    m.abi_version = C2C_ABI_VERSION;
    m.policy_value_size = sizeof(c2c_policy_value);
    m.policy_max_entries = opts.policy_max_entries;
    __u32 key = 0;
    if (const int e = kernel::map_update(fds[kMeta].get(), &key, &m); e != 0)
      return R::fail("cannot write " + opts.pin_root + "/" C2C_META_MAP_NAME ": " + errno_text(e));
  }
  maps->policy_ = std::move(fds[kPolicy]);
  maps->stats_ = std::move(fds[kStats]);
  maps->events_ = std::move(fds[kEvents]);
  maps->meta_ = std::move(fds[kMeta]);
  // Not fatal: without it deletes are compared against a read of the map (slower, as safe). Only
  // for a creator (the daemon, the tools that own the pins): a consumer that opens the pins to
  // read them does not load a program it will not run.
  if (!opts.create)
    maps->compare_delete_error_ = "not loaded for a consumer of the pins (PinOptions::create false)";
  else if (auto cd = PolicyCompareDelete::load(opts.object_path, maps->policy_.get()))
    maps->compare_delete_ = std::move(cd.value());
  else
    maps->compare_delete_error_ = cd.error();
  return R::ok(std::move(maps));
}

Result<std::vector<std::string>> PinnedMaps::restore_pins() const {
  using R = Result<std::vector<std::string>>;
  std::vector<std::string> restored;
  const std::pair<const char*, int> held[] = {{C2C_POLICY_MAP_NAME, policy_.get()},
                                              {C2C_STATS_MAP_NAME, stats_.get()},
                                              {C2C_EVENTS_MAP_NAME, events_.get()},
                                              {C2C_META_MAP_NAME, meta_.get()}};
  for (const auto& [name, fd] : held) {
    const std::string pin = pin_root_ + "/" + name;
    const uint32_t ours = kernel::map_id(fd);
    std::string what;
    const kernel::OpenedPin opened = kernel::open_pin(pin);
    if (!opened.fd) {
      if (!opened.missing()) return R::fail(opened.what);
      what = "deleted";
    } else {
      const uint32_t pinned = kernel::map_id(opened.fd.get());
      if (pinned == ours) continue;
      what = "replaced by " + (pinned == 0 ? std::string("an object that is not a map") : "map id " + std::to_string(pinned));
      if (::unlink(pin.c_str()) != 0 && errno != ENOENT)
        return R::fail("pin " + pin + " (" + what + "): cannot unlink: " + errno_text(errno));
    }
    if (std::string e = kernel::make_pin_dirs(pin_root_); !e.empty()) return R::fail("pin " + pin + " (" + what + "): " + e);
    if (std::string e = kernel::pin_object(fd, pin); !e.empty())
      return R::fail("pin " + pin + " (" + what + "): cannot pin map id " + std::to_string(ours) + " again: " + e);
    restored.push_back(pin + ": " + what);
  }
  return R::ok(std::move(restored));
}

std::string PinnedMaps::remove_pins(const std::string& pin_root) {
  for (const char* name : {C2C_POLICY_MAP_NAME, C2C_STATS_MAP_NAME, C2C_EVENTS_MAP_NAME, C2C_META_MAP_NAME}) {
    std::string pin = pin_root + "/" + name;
    if (::unlink(pin.c_str()) != 0 && errno != ENOENT) return "cannot unlink " + pin + ": " + kernel::errno_text(errno);
  }
  // Other parts (the scheduler) may pin their own objects here: a non-empty directory stays.
  if (::rmdir(pin_root.c_str()) != 0 && errno != ENOENT && errno != ENOTEMPTY)
    return "cannot remove " + pin_root + ": " + kernel::errno_text(errno);
  return "";
}

}  // namespace c2c::mirror

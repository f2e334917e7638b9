#include "sched/loader.hpp"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string_view>
#include <thread>
#include <vector>

#include "host/bpf_rodata.hpp"
#include "kernel/errno_text.hpp"
#include "kernel/map_check.hpp"
#include "kernel/map_ops.hpp"
#include "kernel/pins.hpp"

namespace c2c::sched {
namespace {

constexpr unsigned long kBpfFsMagic = 0xcafe4a11;

std::string errtext(int err) { return kernel::errno_text(err); }

std::string read_trimmed(const char* path) {
  std::ifstream in(path);
  std::string s;
  if (!in || !std::getline(in, s)) return "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Validates that a pinned map has the shape the scheduler expects before reusing it, so a stale
// pin from another ABI version fails loudly naming the mismatching field (src/kernel's one check).
void check_pinned(int fd, const std::string& path, uint32_t type, uint32_t key_size,
                  uint32_t value_size) {
  kernel::MapLayout want;  // any max_entries and flags: the object sizes them
  want.type = type;
  want.key_size = key_size;
  want.value_size = value_size;
  if (std::string why = kernel::check_map(fd, want, path); !why.empty())
    throw LoadError("sched: " + why + "; remove the stale pin");
}

// Reuses the map pinned at pin_root/<name> if present, else asks libbpf to pin it there at load.
// Returns whether a pinned map was reused.
bool reuse_or_pin(bpf_object* obj, const char* name, const std::string& pin_root, uint32_t type,
                  uint32_t key_size, uint32_t value_size) {
  bpf_map* map = bpf_object__find_map_by_name(obj, name);
  if (!map) throw LoadError(std::string("sched: object has no map named ") + name);
  const std::string path = pin_root + "/" + name;
  const kernel::OpenedPin pin = kernel::open_pin(path);
  if (pin.fd) {
    check_pinned(pin.fd.get(), path, type, key_size, value_size);
    // reuse_fd dups it; the pin's own fd closes when this returns.
    if (int err = bpf_map__reuse_fd(map, pin.fd.get()); err)
      throw LoadError("sched: reusing pinned map " + path + ": " + errtext(err));
    return true;
  }
  if (!pin.missing()) throw LoadError("sched: opening pinned map " + path + ": " + errtext(pin.error));
  if (int err = bpf_map__set_pin_path(map, path.c_str()); err)
    throw LoadError("sched: setting pin path " + path + ": " + errtext(err));
  return false;
}

// Finds the offset of the global `uei` inside the .data section through the object's BTF.
std::optional<size_t> uei_offset(bpf_object* obj) {
  btf* b = bpf_object__btf(obj);
  if (!b) return std::nullopt;
  int id = btf__find_by_name_kind(b, ".data", BTF_KIND_DATASEC);
  if (id < 0) return std::nullopt;
  const btf_type* sec = btf__type_by_id(b, static_cast<uint32_t>(id));
  const auto* vars = btf_var_secinfos(sec);
  for (unsigned i = 0; i < btf_vlen(sec); ++i) {
    const btf_type* var = btf__type_by_id(b, vars[i].type);
    if (var && std::string_view(btf__name_by_offset(b, var->name_off)) == "uei")
      return vars[i].offset;
  }
  return std::nullopt;
}

// The section of the exit record's dump (UEI_DEFINE's resizable array uei_dump, 6.12
// user_exit_info.h), and the object's internal map of a section (libbpf prefixes its name).
constexpr std::string_view kDumpSection = ".data.uei_dump";

bpf_map* find_internal_map(bpf_object* obj, std::string_view section) {
  bpf_map* m = nullptr;
  bpf_object__for_each_map(m, obj) {
    const std::string_view name = bpf_map__name(m);
    if (bpf_map__is_internal(m) && name.size() >= section.size() && name.substr(name.size() - section.size()) == section)
      return m;
  }
  return nullptr;
}

// What UEI_SET_SIZE does for a skeleton: the dump's array takes `bytes` and uei_dump_len says so,
// so that ops.exit's UEI_RECORD copies that much of the kernel's dump. An object without the
// array (or bytes 0) keeps no dump: the exit record itself still works.
void set_exit_dump_size(bpf_object* obj, uint32_t bytes) {
  bpf_map* dump = find_internal_map(obj, kDumpSection);
  if (dump == nullptr || bytes == 0) return;
  if (int err = bpf_map__set_value_size(dump, bytes); err)
    throw LoadError("sched: sizing the exit dump (" + std::string(kDumpSection) + ") to " + std::to_string(bytes) +
                    " bytes: " + errtext(err));
  if (std::string e = c2c::host::set_rodata_u32(obj, "uei_dump_len", bytes); !e.empty())
    throw LoadError("sched: exit dump: " + e);
}

c2c_stats read_stats_fd(int fd) {
  int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) throw LoadError("sched: cannot count possible CPUs: " + errtext(ncpu));
  static_assert(sizeof(c2c_stats) % 8 == 0, "per-CPU values are 8-byte aligned");
  std::vector<c2c_stats> per_cpu(static_cast<size_t>(ncpu));
  uint32_t key = 0;
  if (const int err = kernel::map_lookup(fd, &key, per_cpu.data()); err != 0)
    throw LoadError("sched: reading c2c_stats: " + errtext(err));
  return sum_stats(per_cpu);
}

}  // namespace

std::string scx_state() { return read_trimmed("/sys/kernel/sched_ext/state"); }
std::string scx_root_ops() { return read_trimmed("/sys/kernel/sched_ext/root/ops"); }

void ensure_pin_dir(const std::string& dir) {
  struct statfs fs {};
  if (statfs("/sys/fs/bpf", &fs) != 0 || static_cast<unsigned long>(fs.f_type) != kBpfFsMagic) {
    if (mount("bpf", "/sys/fs/bpf", "bpf", 0, nullptr) != 0)
      throw LoadError("sched: /sys/fs/bpf is not bpffs and mounting it failed: " + errtext(errno));
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw LoadError("sched: creating pin dir " + dir + ": " + errtext(errno));
}

c2c_stats read_pinned_stats(const std::string& pin_path) {
  const kernel::OpenedPin pin = kernel::open_pin(pin_path);
  if (!pin.fd) throw LoadError("sched: opening " + pin_path + ": " + errtext(pin.error));
  check_pinned(pin.fd.get(), pin_path, BPF_MAP_TYPE_PERCPU_ARRAY, 4, sizeof(c2c_stats));
  return read_stats_fd(pin.fd.get());
}

std::optional<c2c_task_counters> read_pinned_task_counters(uint32_t tid, const std::string& pin_path, std::string* why) {
  const kernel::OpenedPin pin = kernel::open_pin(pin_path);
  if (!pin.fd) {
    *why = pin.what;
    return std::nullopt;
  }
  // A task storage map is keyed by a pidfd; a thread other than a group leader needs PIDFD_THREAD
  // (6.9; O_EXCL in include/uapi/linux/pidfd.h), a leader's plain pidfd_open serves either way.
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(tid), 0));
  if (pidfd < 0 && errno == EINVAL) pidfd = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(tid), O_EXCL));
  if (pidfd < 0) {
    *why = "pidfd_open " + std::to_string(tid) + ": " + errtext(errno);
    return std::nullopt;
  }
  const kernel::UniqueFd fd(pidfd);
  c2c_task_value v{};
  if (const int err = kernel::map_lookup(pin.fd.get(), &pidfd, &v); err != 0) {
    *why = pin_path + " of " + std::to_string(tid) + ": " + errtext(err);
    return std::nullopt;
  }
  return v.counters;
}

std::unique_ptr<Scheduler> Scheduler::load(const LoaderOptions& opts) {
  const std::string state = scx_state();
  if (state.empty())
    throw LoadError("sched: /sys/kernel/sched_ext/state missing: kernel lacks CONFIG_SCHED_CLASS_EXT");
  if (state != "disabled")
    throw LoadError("sched: sched_ext state is '" + state + "' (another scheduler loaded?)");
  ensure_pin_dir(opts.pin_root);

  std::unique_ptr<Scheduler> s(new Scheduler());
  std::string why;
  s->obj_ = kernel::BpfObject::open(opts.object_path, &why);
  if (!s->obj_) throw LoadError("sched: " + why);
  s->policy_reused_ = reuse_or_pin(s->obj_.get(), C2C_POLICY_MAP_NAME, opts.pin_root, BPF_MAP_TYPE_HASH,
                                   sizeof(c2c_task_key), sizeof(c2c_policy_value));
  reuse_or_pin(s->obj_.get(), C2C_STATS_MAP_NAME, opts.pin_root, BPF_MAP_TYPE_PERCPU_ARRAY, 4,
               sizeof(c2c_stats));
  // The tunables go into .rodata now, between open and load: once loaded it is frozen.
  if (std::string e = apply_tunables(s->obj_.get(), opts.tunables); !e.empty()) throw LoadError("sched: " + e);
  set_exit_dump_size(s->obj_.get(), opts.exit_dump_bytes);
  // Per-task counters and the scheduler's per-task state (ABI v5): pinned so that a measuring
  // tool finds the counters by path and they span scheduler reloads; keyed by pidfd
  // (tests/vm/README.md).
  reuse_or_pin(s->obj_.get(), C2C_TASK_CNT_MAP_NAME, opts.pin_root, BPF_MAP_TYPE_TASK_STORAGE, 4,
               sizeof(c2c_task_value));

  if (std::string e = s->obj_.load(); !e.empty()) throw LoadError("sched: " + e + " (verifier log above)");

  bpf_map* ops = bpf_object__find_map_by_name(s->obj_.get(), "claim2core_ops");
  if (!ops) throw LoadError("sched: object has no struct_ops map claim2core_ops");
  s->link_ = kernel::BpfLink(bpf_map__attach_struct_ops(ops));
  if (!s->link_) {
    int err = errno;
    throw LoadError("sched: attaching struct_ops failed: " + errtext(err) +
                    (err == EBUSY ? " (another sched_ext scheduler is loaded)" : ""));
  }

  // The exit record lives in the .data map (UEI_RECORD in ops.exit). It is read with a map
  // lookup rather than through libbpf's mmap of .data, which did not show the kernel's writes
  // in the guest.
  const auto off = uei_offset(s->obj_.get());
  bpf_map* data = nullptr;
  bpf_object__for_each_map(data, s->obj_.get()) {
    std::string_view name = bpf_map__name(data);
    if (name.size() >= 5 && name.substr(name.size() - 5) == ".data") break;
  }
  if (!off || !data || *off + sizeof(UserExitInfo) > bpf_map__value_size(data))
    throw LoadError("sched: cannot locate the exit record (uei) in .data");
  s->data_fd_ = bpf_map__fd(data);
  s->data_size_ = bpf_map__value_size(data);
  s->uei_offset_ = *off;
  if (bpf_map* dump = find_internal_map(s->obj_.get(), kDumpSection); dump && opts.exit_dump_bytes > 0) {
    s->dump_fd_ = bpf_map__fd(dump);
    s->dump_size_ = bpf_map__value_size(dump);
  }

  bpf_map* st = bpf_object__find_map_by_name(s->obj_.get(), C2C_STATS_MAP_NAME);
  s->stats_fd_ = st ? bpf_map__fd(st) : -1;

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(opts.enable_timeout_ms);
  while (scx_state() != "enabled") {
    if (auto r = s->exit_report())
      throw LoadError("sched: scheduler exited while enabling: " + exit_json(*r));
    if (std::chrono::steady_clock::now() > deadline)
      throw LoadError("sched: state still '" + scx_state() + "' after " +
                      std::to_string(opts.enable_timeout_ms) + " ms");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return s;
}

Scheduler::~Scheduler() { detach(); }  // then obj_ closes

void Scheduler::detach() { link_.reset(); }

std::optional<ExitReport> Scheduler::exit_report() const {
  if (data_fd_ < 0) return std::nullopt;
  std::vector<char> buf(data_size_);
  uint32_t zero = 0;
  if (kernel::map_lookup(data_fd_, &zero, buf.data()) != 0) return std::nullopt;
  UserExitInfo raw{};
  std::memcpy(&raw, buf.data() + uei_offset_, sizeof raw);
  if (raw.kind == 0) return std::nullopt;
  ExitReport r = to_report(raw);
  // UEI_RECORD wrote the dump before it published the kind, so it is complete once kind is set.
  if (dump_fd_ >= 0) {
    std::vector<char> dump(dump_size_);
    if (kernel::map_lookup(dump_fd_, &zero, dump.data()) == 0)
      r.dump.assign(dump.data(), strnlen(dump.data(), dump.size()));
  }
  return r;
}

c2c_stats Scheduler::stats() const {
  if (stats_fd_ < 0) throw LoadError("sched: stats map not available");
  return read_stats_fd(stats_fd_);
}

}  // namespace c2c::sched

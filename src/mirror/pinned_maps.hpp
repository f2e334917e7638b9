// The pinned policy map set: create it (libbpf object API, so the maps carry BTF) or re-open it
// from its pins, verifying that what is pinned is laid out for this ABI (through src/kernel: its
// pins, its map check, its object owner).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "claim2core_abi.hpp"
#include "kernel/map_check.hpp"
#include "kernel/unique_fd.hpp"
#include "mirror/policy_compare_delete.hpp"
#include "mirror/result.hpp"

namespace c2c::mirror {

// Where the maps' BPF object (built from bpf/policy_maps.bpf.c) is looked for by default:
// $C2C_POLICY_MAPS_OBJ if set, else the path compiled in by CMake.
std::string default_maps_object();

// What the policy map must look like for this build of the ABI (the one statement of it: the
// pins' check here, and the generation guard's read of a pin it opens without PinnedMaps).
// nullopt max_entries: any size.
kernel::MapLayout policy_map_layout(std::optional<uint32_t> max_entries);

struct PinOptions {
  std::string pin_root = C2C_PIN_ROOT;  // tests use a private directory under /sys/fs/bpf
  std::string object_path = default_maps_object();
  uint32_t policy_max_entries = C2C_POLICY_MAX_ENTRIES;  // tests make small maps to fill them
  // Size of the task-event ring buffer (a power of two, host::events_ringbuf_bytes_problem); the
  // daemon passes task_event_buffer or host::default_events_ringbuf_bytes(). A pinned ring
  // buffer of another size is replaced when `create` (it holds nothing that must survive).
  uint32_t events_ringbuf_bytes = C2C_EVENTS_RINGBUF_BYTES;
  bool create = true;  // false: only re-open existing pins (a consumer, never a creator)
};

class PinnedMaps {
 public:
  // Re-opens every pin under opts.pin_root that exists and verifies it (type, key and value
  // size, max_entries, flags, the BTF value type, and the ABI version in c2c_meta); creates and
  // pins the missing ones when opts.create. A mismatch is refused with a message naming the pin,
  // the field, what it is and what this build expects; nothing is created or changed then.
  static Result<std::unique_ptr<PinnedMaps>> open(const PinOptions& opts);

  // Unlinks the four pins and the pin directory (tests, `c2c-mirror-tool destroy`). Missing
  // pins are fine. Returns an error message or "".
  static std::string remove_pins(const std::string& pin_root);

  // Kernel state that vanished under us (spec/daemon.md, "Kernel state that vanishes or lingers"):
  // every pin under pin_root() that no longer refers to the map this object holds (deleted, alone
  // or with the whole directory, or replaced by another object) is pinned again from the held fd,
  // the directory re-created as needed. The held map is the one the running programs use and it
  // still has every entry, so nothing is lost; a fresh map would split writers from readers.
  // Returns one line per restored pin ("<pin>: deleted" / "<pin>: replaced by map id N"), empty
  // when every pin is ours; fails naming the pin that cannot be restored.
  Result<std::vector<std::string>> restore_pins() const;

  // The fds of the pins, opened once here: users take them from here instead of opening a pin
  // again by path (the task-event stream writes into events_fd()).
  int policy_fd() const { return policy_.get(); }
  int events_fd() const { return events_.get(); }
  int meta_fd() const { return meta_.get(); }
  // The size of the ring buffer this open replaced because it differed from the wanted size; 0: none.
  uint32_t events_resized_from() const { return events_resized_from_; }
  uint32_t policy_max_entries() const { return policy_max_entries_; }
  bool created() const { return created_; }  // this open created (and pinned) at least one map
  // The in-kernel compare-and-delete loaded against policy_fd() (give it to KernelPolicyMap);
  // nullptr when it could not be loaded, or was not (PinOptions::create false), and
  // compare_delete_error() says why.
  PolicyCompareDelete* compare_delete() const { return compare_delete_.get(); }
  const std::string& compare_delete_error() const { return compare_delete_error_; }
  const std::string& pin_root() const { return pin_root_; }

 private:
  kernel::UniqueFd policy_, stats_, events_, meta_;
  std::unique_ptr<PolicyCompareDelete> compare_delete_;  // after policy_: destroyed before it
  std::string compare_delete_error_;
  uint32_t policy_max_entries_ = 0;
  uint32_t events_resized_from_ = 0;
  bool created_ = false;
  std::string pin_root_;
};

}  // namespace c2c::mirror

#include "kernel/map_check.hpp"

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include <cerrno>
#include <cstring>

#include "claim2core_abi.h"
#include "kernel/errno_text.hpp"

namespace c2c::kernel {

std::optional<MapFacts> map_facts(int fd, std::string* err) {
  bpf_map_info info;
  std::memset(&info, 0, sizeof info);
  __u32 len = sizeof info;
  if (const int rc = bpf_map_get_info_by_fd(fd, &info, &len); rc != 0) {
    if (err != nullptr) *err = "cannot read map info: " + errno_text(rc);
    return std::nullopt;
  }
  return MapFacts{info.id,          info.type,      info.key_size, info.value_size,
                  info.max_entries, info.map_flags, info.btf_id,   info.btf_value_type_id};
}

uint32_t map_id(int fd) {
  const auto f = map_facts(fd);
  return f ? f->id : 0;
}

std::string mismatch_text(const std::string& pin, const std::string& field, uint64_t is, uint64_t want) {
  return "pinned map " + pin + ": " + field + " is " + std::to_string(is) + ", this build (ABI v" +
         std::to_string(C2C_ABI_VERSION) + ") expects " + std::to_string(want);
}

namespace {
// The BTF value type of a map that has BTF: "" when it is `want.btf_value` of value_size bytes.
std::string check_btf_value(const MapFacts& f, const MapLayout& want, const std::string& pin) {
  if (f.btf_id == 0) return "pinned map " + pin + ": has no BTF, so it was not created from the object that defines it";
  btf* b = btf__load_from_kernel_by_id(f.btf_id);
  if (b == nullptr) return "pinned map " + pin + ": cannot load its BTF: " + errno_text(errno);
  std::string err;
  const btf_type* t = btf__type_by_id(b, f.btf_value_type_id);
  const char* tname = t != nullptr ? btf__name_by_offset(b, t->name_off) : nullptr;
  if (t == nullptr || tname == nullptr || std::strcmp(tname, want.btf_value) != 0)
    err = "pinned map " + pin + ": BTF value type is '" + (tname != nullptr ? tname : "?") + "', expected '" +
          want.btf_value + "'";
  else if (t->size != want.value_size)
    err = mismatch_text(pin, "BTF value size", t->size, want.value_size);
  btf__free(b);
  return err;
}
}  // namespace

std::string check_map(int fd, const MapLayout& want, const std::string& pin) {
  std::string why;
  const auto f = map_facts(fd, &why);
  if (!f) return "pinned map " + pin + ": " + why;
  if (f->type != want.type) return mismatch_text(pin, "map_type", f->type, want.type);
  if (f->key_size != want.key_size) return mismatch_text(pin, "key_size", f->key_size, want.key_size);
  if (f->value_size != want.value_size) return mismatch_text(pin, "value_size", f->value_size, want.value_size);
  if (want.max_entries && f->max_entries != *want.max_entries)
    return mismatch_text(pin, "max_entries", f->max_entries, *want.max_entries);
  if (want.map_flags && f->map_flags != *want.map_flags)
    return mismatch_text(pin, "map_flags", f->map_flags, *want.map_flags);
  if (want.btf_value == nullptr) return "";
  return check_btf_value(*f, want, pin);
}

}  // namespace c2c::kernel

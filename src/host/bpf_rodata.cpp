#include "host/bpf_rodata.hpp"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cstring>
#include <string_view>

namespace c2c::host {
namespace {

// The one writer behind both widths: the variable's size must be the value's.
std::string set_rodata(bpf_object* obj, const char* var, const void* value, size_t value_size) {
  bpf_map* rodata = nullptr;
  bpf_map* m = nullptr;
  bpf_object__for_each_map(m, obj) {
    const std::string_view name = bpf_map__name(m);
    if (bpf_map__is_internal(m) && name.size() >= 7 && name.substr(name.size() - 7) == ".rodata") rodata = m;
  }
  const btf* b = bpf_object__btf(obj);
  if (rodata == nullptr || b == nullptr) return std::string("no .rodata with BTF for ") + var;
  const int sec_id = btf__find_by_name_kind(b, ".rodata", BTF_KIND_DATASEC);
  if (sec_id < 0) return std::string("no .rodata section in the BTF for ") + var;
  const btf_type* sec = btf__type_by_id(b, static_cast<__u32>(sec_id));
  const btf_var_secinfo* vi = btf_var_secinfos(sec);
  for (unsigned i = 0; i < btf_vlen(sec); ++i, ++vi) {
    const btf_type* v = btf__type_by_id(b, vi->type);
    const char* name = v != nullptr ? btf__name_by_offset(b, v->name_off) : nullptr;
    if (name == nullptr || std::strcmp(name, var) != 0) continue;
    if (vi->size != value_size)
      return std::string(var) + " is " + std::to_string(vi->size) + " bytes, not " + std::to_string(value_size);
    size_t size = 0;
    auto* data = static_cast<char*>(bpf_map__initial_value(rodata, &size));
    if (data == nullptr || vi->offset + value_size > size) return std::string("cannot write ") + var;
    std::memcpy(data + vi->offset, value, value_size);
    return "";
  }
  return std::string("no variable ") + var + " in .rodata";
}

}  // namespace

std::string set_rodata_u32(bpf_object* obj, const char* var, uint32_t value) {
  return set_rodata(obj, var, &value, sizeof value);
}

std::string set_rodata_u64(bpf_object* obj, const char* var, uint64_t value) {
  return set_rodata(obj, var, &value, sizeof value);
}

}  // namespace c2c::host

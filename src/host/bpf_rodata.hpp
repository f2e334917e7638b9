// Setting a `const volatile` global of a BPF object between open and load (what a bpftool
// skeleton would do; this project uses libbpf's object API without skeletons).
#pragma once

#include <cstdint>
#include <string>

struct bpf_object;

namespace c2c::host {

// Writes `value` into the u32 / u64 global `var` of the object's .rodata (found by its BTF). ""
// on success, else why not (no such variable, another size, object already loaded).
std::string set_rodata_u32(bpf_object* obj, const char* var, uint32_t value);
std::string set_rodata_u64(bpf_object* obj, const char* var, uint64_t value);

}  // namespace c2c::host

// What a map is (its kernel facts) and whether it is laid out as a user needs: the one check of a
// pinned or adopted map's type, key and value size, max_entries, flags and BTF value type. Errors
// name the pin (or whatever the caller calls the map) and the mismatching field, in one form:
//   "pinned map <pin>: <field> is <is>, this build (ABI v<N>) expects <want>"
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace c2c::kernel {

struct MapFacts {
  uint32_t id = 0;
  uint32_t type = 0;  // enum bpf_map_type
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  uint32_t max_entries = 0;
  uint32_t map_flags = 0;
  uint32_t btf_id = 0;
  uint32_t btf_value_type_id = 0;
};

// The facts of the map behind fd; nullopt (and *err "cannot read map info: <why>") when fd is not
// a map or cannot be read.
std::optional<MapFacts> map_facts(int fd, std::string* err = nullptr);
// Its kernel id; 0 when fd is not a map (a foreign object at a pin).
uint32_t map_id(int fd);

struct MapLayout {
  uint32_t type = 0;  // enum bpf_map_type
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  std::optional<uint32_t> max_entries;  // nullopt: any size
  std::optional<uint32_t> map_flags;    // nullopt: any flags
  // The BTF name of the value type (the map must carry BTF, and the type's size be value_size);
  // nullptr: BTF not checked (a ring buffer, a map made by an object without it).
  const char* btf_value = nullptr;
};

// "" when the map behind fd is laid out as `want`, else why not, naming `pin` and the first
// field that differs (map_type, key_size, value_size, max_entries, map_flags, BTF).
std::string check_map(int fd, const MapLayout& want, const std::string& pin);

// The one form of a field's mismatch (the ABI's own fields, e.g. c2c_meta's, use it too).
std::string mismatch_text(const std::string& pin, const std::string& field, uint64_t is, uint64_t want);

}  // namespace c2c::kernel

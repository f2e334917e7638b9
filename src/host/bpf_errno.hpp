// The one errno -> message helper of the libbpf layer (src/host, src/mirror): libbpf returns
// -errno from most calls and sets errno from others, so both signs are accepted.
#pragma once

#include <cstring>
#include <string>

namespace c2c::host {

inline std::string bpf_errno_text(int e) { return std::strerror(e < 0 ? -e : e); }

}  // namespace c2c::host

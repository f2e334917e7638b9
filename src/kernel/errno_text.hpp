// The one errno -> message helper of the kernel layer and its users (src/host, src/mirror,
// src/sched, src/daemon): libbpf returns -errno from most calls and sets errno from others, so
// both signs are accepted.
#pragma once

#include <string>

namespace c2c::kernel {

std::string errno_text(int e);

}  // namespace c2c::kernel

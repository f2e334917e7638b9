#include "kernel/errno_text.hpp"

#include <cstring>

namespace c2c::kernel {

std::string errno_text(int e) { return std::strerror(e < 0 ? -e : e); }

}  // namespace c2c::kernel

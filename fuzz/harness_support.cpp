#include "fuzz/harness_support.hpp"

#include <cstdio>
#include <cstdlib>

namespace c2c::fuzz {

const char* g_current_input = nullptr;

void die() {
  if (g_current_input != nullptr) std::fprintf(stderr, "failing input: %s\n", g_current_input);
  std::fflush(stderr);
#ifdef C2C_LIBFUZZER
  __builtin_trap();  // libFuzzer saves the input as crash-<sha1>
#else
  std::abort();
#endif
}

}  // namespace c2c::fuzz

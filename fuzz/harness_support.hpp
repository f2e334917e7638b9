// What every harness does on a failed check: print which input failed (the replay driver names
// the file) and stop the process so that libFuzzer records a crash and the gcc replay driver
// exits non-zero.
#pragma once

namespace c2c::fuzz {

// Set by the replay driver to the file being replayed; nullptr under libFuzzer.
extern const char* g_current_input;

[[noreturn]] void die();

}  // namespace c2c::fuzz

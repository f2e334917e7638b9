#pragma once
// The checkout's root, for tests that read committed files (examples, fuzz findings).
#include <string>

namespace c2c::test {
// Defined in one generated file (tests/unit/CMakeLists.txt), not as a -D on every test file:
// a compile command that names the checkout differs between the main build and the seeded-bug
// runs' tree copies, and ccache could not share a single object between them.
std::string source_dir();
}  // namespace c2c::test

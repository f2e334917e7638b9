// Where the DRA fixtures are: $C2C_FIXTURES, else tests/fixtures/dra in the repository (copied from
// the team's shared fixtures with their provenance, SOURCES.md). A missing directory fails the test:
// every clone has the fixtures, so a skip would only hide a broken checkout.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>

namespace c2c::k8s::testing {

inline std::optional<std::filesystem::path> fixture_dir() {
  const char* env = std::getenv("C2C_FIXTURES");
  std::filesystem::path p = env && *env ? env : C2C_FIXTURES_DEFAULT;
  std::error_code ec;
  if (!std::filesystem::is_directory(p, ec)) return std::nullopt;
  return p;
}

}  // namespace c2c::k8s::testing

#define C2C_REQUIRE_FIXTURES(dir)                                                                      \
  auto dir##_opt = ::c2c::k8s::testing::fixture_dir();                                                \
  if (!dir##_opt) { FAIL() << "DRA fixtures not found at " C2C_FIXTURES_DEFAULT " (or $C2C_FIXTURES)"; } \
  const std::filesystem::path dir = *dir##_opt

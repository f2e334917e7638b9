// Where the DRA fixtures are: $C2C_FIXTURES, else tests/fixtures/dra in the repository (copied from
// the team's shared fixtures with their provenance, SOURCES.md). A missing directory fails the test:
// every clone has the fixtures, so a skip would only hide a broken checkout.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "source_dir.hpp"

namespace c2c::k8s::testing {

inline std::string default_fixture_dir() { return c2c::test::source_dir() + "/tests/fixtures/dra"; }

inline std::optional<std::filesystem::path> fixture_dir() {
  const char* env = std::getenv("C2C_FIXTURES");
  std::filesystem::path p = env && *env ? std::filesystem::path(env) : std::filesystem::path(default_fixture_dir());
  std::error_code ec;
  if (!std::filesystem::is_directory(p, ec)) return std::nullopt;
  return p;
}

}  // namespace c2c::k8s::testing

#define C2C_REQUIRE_FIXTURES(dir)                                                                      \
  auto dir##_opt = ::c2c::k8s::testing::fixture_dir();                                                \
  if (!dir##_opt) { FAIL() << "DRA fixtures not found at " << ::c2c::k8s::testing::default_fixture_dir() << " (or $C2C_FIXTURES)"; } \
  const std::filesystem::path dir = *dir##_opt

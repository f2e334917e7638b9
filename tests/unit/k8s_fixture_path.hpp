// Where the DRA fixtures are: $C2C_FIXTURES, else shared/fixtures/dra beside the checkout.
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
  if (!dir##_opt) { GTEST_SKIP() << "DRA fixtures not found (set C2C_FIXTURES or put shared/ beside the clone)"; } \
  const std::filesystem::path dir = *dir##_opt

// What the mirror's integration tests need from the machine: root, a bpffs at /sys/fs/bpf
// (mounted here if missing, as on a fresh boot), the maps' BPF object, and a private pin root
// so that a running daemon's maps are never touched.
#pragma once

#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <string>

#include "mirror/pinned_maps.hpp"

namespace c2c::mirror::testing {

inline bool is_bpffs(const char* path) {
  struct statfs st;
  return ::statfs(path, &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

// "" when the tests can run, else why not.
inline std::string bpffs_unavailable() {
  if (::geteuid() != 0) return "needs root (BPF maps and bpffs pins)";
  if (!is_bpffs("/sys/fs/bpf")) {
    ::mkdir("/sys/fs/bpf", 0700);
    if (::mount("bpf", "/sys/fs/bpf", "bpf", 0, nullptr) != 0 || !is_bpffs("/sys/fs/bpf"))
      return "no bpffs at /sys/fs/bpf and mounting one failed";
  }
  struct stat st;
  if (::stat(default_maps_object().c_str(), &st) != 0)
    return "the maps' BPF object " + default_maps_object() + " is not built (build with bpf in C2C_PARTS)";
  return "";
}

// A pin root of its own per test, removed before and after.
inline std::string private_pin_root(const std::string& tag) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string root = "/sys/fs/bpf/c2c-test-mirror-" + std::to_string(::getpid()) + "-" + tag + "-" + info->name();
  PinnedMaps::remove_pins(root);
  return root;
}

#define C2C_REQUIRE_BPFFS()                                                   \
  do {                                                                        \
    if (std::string why = ::c2c::mirror::testing::bpffs_unavailable(); !why.empty()) \
      GTEST_SKIP() << why;                                                    \
  } while (0)

}  // namespace c2c::mirror::testing

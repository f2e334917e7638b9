// Finding BPF objects: the config override, $C2C_BPF_DIR, the install-relative directory, the
// build tree only for an executable inside one, /usr/lib/claim2core. No build path is compiled in.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "host/bpf_object_path.hpp"
#include "host/task_snapshot.hpp"

using namespace c2c::host;
namespace fs = std::filesystem;

namespace {

class EnvDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("c2c-host-bpfdir-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "probe_only_here.bpf.o") << "not really ELF";
    const char* old = std::getenv("C2C_BPF_DIR");
    if (old != nullptr) old_ = old;
    ::setenv("C2C_BPF_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (old_) {
      ::setenv("C2C_BPF_DIR", old_->c_str(), 1);
    } else {
      ::unsetenv("C2C_BPF_DIR");
    }
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::optional<std::string> old_;
};

TEST_F(EnvDir, EnvironmentOverrideComesFirst) {
  const auto dirs = bpf_object_dirs();
  ASSERT_GE(dirs.size(), 3u);
  EXPECT_EQ(dirs.front(), dir_);
  EXPECT_EQ(dirs.back(), fs::path("/usr/lib/claim2core"));
  std::string err;
  EXPECT_EQ(find_bpf_object("probe_only_here", &err), dir_ / "probe_only_here.bpf.o") << err;
}

TEST_F(EnvDir, MissingObjectListsEveryPlaceTried) {
  std::string err;
  EXPECT_FALSE(find_bpf_object("no_such_object", &err));
  EXPECT_NE(err.find("C2C_BPF_DIR"), std::string::npos);
  EXPECT_NE(err.find((dir_ / "no_such_object.bpf.o").string()), std::string::npos) << err;
  EXPECT_NE(err.find("/usr/lib/claim2core/no_such_object.bpf.o"), std::string::npos) << err;
}

TEST_F(EnvDir, ConfigOverrideComesBeforeTheEnvironment) {
  const fs::path other = dir_ / "from-config";
  set_bpf_object_dir_override(other.string());
  const auto dirs = bpf_object_dirs();
  set_bpf_object_dir_override("");
  ASSERT_GE(dirs.size(), 2u);
  EXPECT_EQ(dirs[0], other);
  EXPECT_EQ(dirs[1], dir_);
  EXPECT_EQ(bpf_object_dirs().front(), dir_);  // cleared again
}

// This test binary runs from the build tree: its objects are found there (the fallback), after
// the install-relative directory next to the executable.
TEST(BpfObjectDirs, InstallRelativeThenBuildTreeOfTheExecutable) {
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  const auto dirs = bpf_object_dirs();
  const auto install = std::find(dirs.begin(), dirs.end(), (exe.parent_path() / "../lib/claim2core").lexically_normal());
  ASSERT_NE(install, dirs.end());
  const auto tree = build_tree_of(exe);
  ASSERT_TRUE(tree.has_value()) << exe;
  const auto fallback = std::find(dirs.begin(), dirs.end(), *tree / "bpf");
  ASSERT_NE(fallback, dirs.end());
  EXPECT_LT(install, fallback);
}

TEST(BpfObjectDirs, AnInstalledExecutableHasNoBuildTree) {
  const fs::path root = fs::temp_directory_path() / ("c2c-host-prefix-" + std::to_string(::getpid()));
  fs::create_directories(root / "usr/bin");
  EXPECT_FALSE(build_tree_of(root / "usr/bin/claim2cored").has_value());
  std::ofstream(root / "CMakeCache.txt") << "";
  EXPECT_EQ(build_tree_of(root / "usr/bin/claim2cored"), root);
  fs::remove_all(root);
}

TEST(HostTaskSnapshotter, ProcfsWhenBpfIsDisabled) {
  TaskSnapshotter s(false);
  EXPECT_EQ(s.source(), SnapshotSource::Procfs);
  EXPECT_FALSE(s.fallback_reason().empty());
  const auto own = s.snapshot(static_cast<uint32_t>(::getpid()));
  ASSERT_EQ(own.size(), 1u);
  EXPECT_EQ(own[0].tid, static_cast<uint32_t>(::getpid()));
}

TEST(HostTaskSnapshotter, BrokenObjectFallsBackToProcfsWithReason) {
  const fs::path dir = fs::temp_directory_path() / ("c2c-host-badobj-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "task_iter.bpf.o") << "garbage";
  ::setenv("C2C_BPF_DIR", dir.c_str(), 1);
  TaskSnapshotter s(true);
  ::unsetenv("C2C_BPF_DIR");
  fs::remove_all(dir);
  EXPECT_EQ(s.source(), SnapshotSource::Procfs);
  EXPECT_NE(s.fallback_reason().find("task_iter.bpf.o"), std::string::npos) << s.fallback_reason();
  EXPECT_FALSE(s.snapshot(static_cast<uint32_t>(::getpid())).empty());
}

}  // namespace

// Finding BPF objects: $C2C_BPF_DIR first, then the build tree, then install-relative paths.
#include <gtest/gtest.h>

#include <unistd.h>

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
  EXPECT_EQ(dirs.back(), fs::path("/usr/lib/claim2core/bpf"));
  std::string err;
  EXPECT_EQ(find_bpf_object("probe_only_here", &err), dir_ / "probe_only_here.bpf.o") << err;
}

TEST_F(EnvDir, MissingObjectListsEveryPlaceTried) {
  std::string err;
  EXPECT_FALSE(find_bpf_object("no_such_object", &err));
  EXPECT_NE(err.find("C2C_BPF_DIR"), std::string::npos);
  EXPECT_NE(err.find((dir_ / "no_such_object.bpf.o").string()), std::string::npos) << err;
  EXPECT_NE(err.find("/usr/lib/claim2core/bpf/no_such_object.bpf.o"), std::string::npos) << err;
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

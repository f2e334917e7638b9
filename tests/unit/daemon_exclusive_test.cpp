// One daemon per node state, the pieces that need no bpffs (src/daemon/process/exclusive.*): private
// directories, the holder of a flock, a served or stale socket path. The whole start-up refusal
// runs in tests/integration/daemon_safety_test.py (Exclusive).
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "daemon/process/exclusive.hpp"

namespace c2c::daemon {
namespace {

namespace fs = std::filesystem;

struct DaemonExclusive : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("c2c-excl-" + std::to_string(getpid()) + "-" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    chmod(dir.c_str(), 0700);
  }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(DaemonExclusive, APrivateDirectoryIsCreatedOrMustBeOwnAndNotWritableByOthers) {
  const std::string fresh = (dir / "a" / "b").string();
  EXPECT_EQ(ensure_private_dir("state_dir", fresh, geteuid()), "");
  struct stat st {};
  ASSERT_EQ(stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(ensure_private_dir("state_dir", fresh, geteuid()), "") << "an existing private directory is fine";

  chmod(fresh.c_str(), 0775);
  std::string e = ensure_private_dir("state_dir", fresh, geteuid());
  EXPECT_NE(e.find("state_dir " + fresh + " is owned by uid " + std::to_string(geteuid()) + " with mode 0775"),
            std::string::npos)
      << e;
  chmod(fresh.c_str(), 0702);
  EXPECT_NE(ensure_private_dir("state_dir", fresh, geteuid()), "") << "other-writable";
  chmod(fresh.c_str(), 0750);
  EXPECT_EQ(ensure_private_dir("state_dir", fresh, geteuid()), "") << "group-readable is not writable";

  e = ensure_private_dir("socket directory", fresh, geteuid() + 1);
  EXPECT_NE(e.find("must be owned by the daemon's uid " + std::to_string(geteuid() + 1)), std::string::npos) << e;

  const std::string link = (dir / "link").string();
  fs::create_directory_symlink(fresh, link);
  e = ensure_private_dir("state_dir", link, geteuid());
  EXPECT_NE(e.find("is not a directory"), std::string::npos) << e;
}

TEST_F(DaemonExclusive, TheHolderOfAFlockIsFoundByItsPid) {
  const std::string path = (dir / "lock").string();
  int fd = open(path.c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(flock_holder(fd), 0) << "nobody holds it";
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int c = open(path.c_str(), O_RDWR);
    char b = flock(c, LOCK_EX) == 0 ? 'y' : 'n';
    if (write(ready[1], &b, 1) != 1 || read(done[0], &b, 1) < 0) _exit(1);
    _exit(0);
  }
  char b = 0;
  ASSERT_EQ(read(ready[0], &b, 1), 1);
  ASSERT_EQ(b, 'y');
  EXPECT_NE(flock(fd, LOCK_EX | LOCK_NB), 0);
  EXPECT_EQ(flock_holder(fd), child);
  ASSERT_EQ(write(done[1], "x", 1), 1);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0) << "the kernel drops the lock with its process";
  for (int p : {ready[0], ready[1], done[0], done[1], fd}) close(p);
}

TEST_F(DaemonExclusive, AServedSocketIsRefusedNamingThePidAndAStaleOneIsRemoved) {
  const std::string path = (dir / "d.sock").string();
  EXPECT_EQ(claim_socket_path(path), "") << "no file: free";
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(s, 4), 0);
  std::string e = claim_socket_path(path);
  EXPECT_NE(e.find("socket " + path + " is served by a running process (pid " + std::to_string(getpid()) + ")"),
            std::string::npos)
      << e;
  EXPECT_TRUE(fs::exists(path)) << "a served socket is left alone";
  close(s);  // the file stays: stale
  ASSERT_TRUE(fs::exists(path));
  EXPECT_EQ(claim_socket_path(path), "");
  EXPECT_FALSE(fs::exists(path)) << "the stale socket is removed";

  const std::string file = (dir / "not-a-socket").string();
  close(open(file.c_str(), O_CREAT | O_WRONLY, 0600));
  e = claim_socket_path(file);
  EXPECT_NE(e.find("is not a socket"), std::string::npos) << e;
  EXPECT_TRUE(fs::exists(file));
}

}  // namespace
}  // namespace c2c::daemon

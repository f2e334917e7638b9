#include "host/file_ops.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>

namespace c2c::host {
namespace {

class PosixFileOps final : public FileOps {
 public:
  int open(const char* path, int flags, mode_t mode) override { return ::open(path, flags, mode); }
  ssize_t write(int fd, const void* buf, size_t n) override { return ::write(fd, buf, n); }
  ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) override { return ::pwrite(fd, buf, n, offset); }
  int fsync(int fd) override { return ::fsync(fd); }
  int fdatasync(int fd) override { return ::fdatasync(fd); }
  int ftruncate(int fd, off_t length) override { return ::ftruncate(fd, length); }
  int close(int fd) override { return ::close(fd); }
  int rename(const char* from, const char* to) override { return ::rename(from, to); }
};

std::atomic<FileOps*> g_ops{nullptr};

}  // namespace

FileOps& posix_file_ops() {
  static PosixFileOps ops;
  return ops;
}

FileOps& file_ops() {
  FileOps* o = g_ops.load(std::memory_order_acquire);
  return o != nullptr ? *o : posix_file_ops();
}

void set_file_ops(FileOps* ops) { g_ops.store(ops, std::memory_order_release); }

}  // namespace c2c::host

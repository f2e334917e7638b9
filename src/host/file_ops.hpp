// The file-system calls of every durable write (durable_file.*, the daemon's state log), behind
// one seam, so that a test can record each call and replay every state a power loss could leave
// (tests/unit/daemon_crash_consistency_test.cpp, ALICE/CrashMonkey style). The process uses the
// POSIX calls unless a test installs another implementation; nothing else changes behaviour.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace c2c::host {

class FileOps {
 public:
  virtual ~FileOps() = default;
  virtual int open(const char* path, int flags, mode_t mode) = 0;
  virtual ssize_t write(int fd, const void* buf, size_t n) = 0;
  virtual ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) = 0;
  virtual int fsync(int fd) = 0;
  virtual int fdatasync(int fd) = 0;
  virtual int ftruncate(int fd, off_t length) = 0;
  virtual int close(int fd) = 0;
  virtual int rename(const char* from, const char* to) = 0;
};

// The POSIX calls.
FileOps& posix_file_ops();
// The calls durable writes use now: posix_file_ops() unless a test installed others.
FileOps& file_ops();
// Tests only: installs `ops` (nullptr: POSIX again). Not thread-safe against writers in flight.
void set_file_ops(FileOps* ops);

}  // namespace c2c::host

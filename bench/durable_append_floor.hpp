// The physical floor under an RPC that changes the daemon's durable state: one record of the same
// size appended to a file beside the daemon's state log (same file system, same disk) and made
// durable the way StateLog::append does it (blocks reserved ahead with fallocate KEEP_SIZE, write,
// one fdatasync). The daemon replies only once its record is durable (spec/daemon.md, "The write
// path"), so no RPC -> map figure can be below this one; on this shared machine the disk's flush
// alone has a p99 of 0.8 ms to tens of ms from one minute to the next (a virtio disk whose host is
// busy), which is why the RPC benchmarks time it interleaved with the calls, one floor sample
// before each call, and print both.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace c2c::bench {

class DurableAppendFloor {
 public:
  // The floor's file in `dir` (created, removed with the object); records of `record_bytes`.
  DurableAppendFloor(const std::string& dir, size_t record_bytes)
      : path_(dir + "/durable-append-floor.log"), record_(record_bytes, 'r') {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  }
  ~DurableAppendFloor() {
    if (fd_ >= 0) ::close(fd_);
    std::filesystem::remove(path_);
  }
  DurableAppendFloor(const DurableAppendFloor&) = delete;
  DurableAppendFloor& operator=(const DurableAppendFloor&) = delete;

  bool ok() const { return fd_ >= 0; }
  // The record size the next samples use (the daemon's record for the call being timed).
  void set_record_bytes(size_t n) { record_.assign(n, 'r'); }

  // One durable append, in microseconds; a negative value when the file system refused it.
  double sample_us() {
    const auto t0 = std::chrono::steady_clock::now();
    if (size_ + record_.size() > reserved_) {
      reserved_ = size_ + kReserveAhead;
      if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(reserved_)) != 0) return -1;
    }
    if (::write(fd_, record_.data(), record_.size()) != static_cast<ssize_t>(record_.size())) return -1;
    if (::fdatasync(fd_) != 0) return -1;
    size_ += record_.size();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  static constexpr uint64_t kReserveAhead = 1u << 20;
  std::string path_;
  std::string record_;
  int fd_ = -1;
  uint64_t size_ = 0, reserved_ = 0;
};

// The size of the daemon's state log (grows by one record per durable RPC; 0 if absent).
inline uint64_t state_log_bytes(const std::string& state_dir) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(state_dir + "/state.log", ec);
  return ec ? 0 : n;
}

}  // namespace c2c::bench

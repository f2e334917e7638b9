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
#include <utility>

namespace c2c::bench {

class DurableAppendFloor {
 public:
  // The floor's file in `dir` (created, removed with the object), for the daemon whose
  // --state-dir is `state_dir`; records of `record_bytes` until a call shows the daemon's size.
  DurableAppendFloor(const std::string& dir, std::string state_dir, size_t record_bytes)
      : path_(dir + "/durable-append-floor.log"), state_log_(std::move(state_dir) + "/state.log"),
        record_(record_bytes, 'r') {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  }
  ~DurableAppendFloor() {
    if (fd_ >= 0) ::close(fd_);
    std::filesystem::remove(path_);
  }
  DurableAppendFloor(const DurableAppendFloor&) = delete;
  DurableAppendFloor& operator=(const DurableAppendFloor&) = delete;

  bool ok() const { return fd_ >= 0; }

  // Right before a call: one durable append of the daemon's record, in microseconds (negative
  // when the file system refused it); and the state log's size, which after_call() compares.
  double before_call() {
    const double us = sample_us();
    log_before_ = state_log_bytes();
    return us;
  }
  // Right after it: the state log grew by the call's record, the size of the next samples (a
  // compaction empties the log: the size is then kept).
  void after_call() {
    const uint64_t now = state_log_bytes();
    if (now > log_before_) record_.assign(now - log_before_, 'r');
  }

 private:
  static constexpr uint64_t kReserveAhead = 1u << 20;

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
  uint64_t state_log_bytes() const {  // 0 if absent
    std::error_code ec;
    const auto n = std::filesystem::file_size(state_log_, ec);
    return ec ? 0 : n;
  }

  std::string path_, state_log_;
  std::string record_;
  int fd_ = -1;
  uint64_t size_ = 0, reserved_ = 0, log_before_ = 0;
};

}  // namespace c2c::bench

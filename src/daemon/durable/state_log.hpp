// The durable state's write-ahead log (spec/daemon.md, "The write path"): one record per group
// commit (every mutating RPC of one loop turn), appended and made durable with one fdatasync;
// replayed after the snapshot (state.json) on start; emptied when the snapshot is rewritten.
//
// Record: u32 payload length (little endian) | u32 CRC-32 of the payload (zlib) | payload.
// A crash mid-append leaves a torn last record: scan_log drops it (the reply for it was never
// sent). A bad record with good records after it is damage, not a crash: the start is refused,
// naming the file and the offset.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace c2c::daemon {

inline constexpr uint32_t kMaxLogRecord = 64u << 20;

std::string frame_record(const std::string& payload);

struct LogScan {
  std::vector<std::string> records;  // complete, checksummed payloads in order
  uint64_t valid_bytes = 0;          // where the complete records end
  std::string dropped;               // why a torn tail was dropped ("" when none)
  std::string error;                 // corrupt middle: "offset N: ..." ("" when fine)
};
LogScan scan_log(const std::string& bytes);

class StateLog {
 public:
  // Opens (creates) the log; *scan holds what it contained. A torn tail is cut off the file so
  // new records follow the last complete one. nullptr with *err on a corrupt middle or an I/O
  // error (naming the file).
  static std::unique_ptr<StateLog> open(const std::string& path, LogScan* scan, std::string* err);
  ~StateLog();
  StateLog(const StateLog&) = delete;
  StateLog& operator=(const StateLog&) = delete;

  // write + fdatasync. On failure the file is cut back to its old end (a half-written record must
  // not sit before the next one); if even that fails the log is broken() until reset().
  std::string append(const std::string& payload);
  std::string reset();  // empty it (the snapshot now holds everything): ftruncate + fsync
  // Allocates the file system blocks for the next `bytes` after the end (fallocate, the size
  // unchanged), so that an append of up to that much cannot fail for want of space; "" or the
  // error (ENOSPC, or EOPNOTSUPP where the file system cannot reserve). Reserves ahead in chunks:
  // most calls are no syscall. A failed append or a reset gives the reservation back.
  std::string reserve(uint64_t bytes);
  // Free bytes of the file system holding the log ("" or the error in *err).
  uint64_t free_bytes() const;
  uint64_t size() const { return size_; }
  bool broken() const { return broken_; }
  const std::string& path() const { return path_; }

 private:
  StateLog(std::string path, int fd, uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t reserved_end_ = 0;  // blocks allocated up to here (fallocate, FALLOC_FL_KEEP_SIZE)
  bool broken_ = false;
};

}  // namespace c2c::daemon

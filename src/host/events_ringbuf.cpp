#include "host/events_ringbuf.hpp"

#include <algorithm>
#include <bit>
#include <fstream>

#include <linux/types.h>

#include "claim2core_abi.hpp"

namespace c2c::host {

static_assert(kEventRecordBytes == sizeof(c2c_task_record) + 8, "a ring buffer record is the record + BPF_RINGBUF_HDR_SZ");
static_assert(kMinEventsRingbufBytes == C2C_EVENTS_RINGBUF_BYTES, "the floor is the size compiled into the objects");

uint32_t events_ringbuf_bytes_for(uint64_t pid_max) {
  // pid_max is at most 2^22 (PID_MAX_LIMIT); the min() only keeps a nonsense input from overflowing.
  const uint64_t want = 2 * std::min<uint64_t>(pid_max, 1ull << 32) * kEventRecordBytes;
  const uint64_t pow2 = std::bit_ceil(std::max<uint64_t>(want, 1));
  return static_cast<uint32_t>(std::clamp(pow2, kMinEventsRingbufBytes, kMaxDerivedEventsRingbufBytes));
}

uint32_t default_events_ringbuf_bytes(const std::filesystem::path& pid_max_file) {
  std::ifstream in(pid_max_file);
  uint64_t pid_max = 0;
  if (!(in >> pid_max)) return static_cast<uint32_t>(kMinEventsRingbufBytes);
  return events_ringbuf_bytes_for(pid_max);
}

std::optional<std::string> events_ringbuf_bytes_problem(uint64_t bytes) {
  if (bytes < kMinEventsRingbufBytes || bytes > kMaxEventsRingbufBytes)
    return std::to_string(bytes) + " bytes is outside " + std::to_string(kMinEventsRingbufBytes) + ".." +
           std::to_string(kMaxEventsRingbufBytes);
  if (!std::has_single_bit(bytes)) return std::to_string(bytes) + " bytes is not a power of two";
  return std::nullopt;
}

}  // namespace c2c::host

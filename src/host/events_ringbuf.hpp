// The size of the task-event ring buffer (C2C_EVENTS_MAP_NAME): big enough for a burst of thread
// starts, derived from /proc/sys/kernel/pid_max unless configured (daemon `task_event_buffer`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace c2c::host {

// One record in the ring buffer: struct c2c_task_record plus the ring buffer's 8-byte header.
inline constexpr uint64_t kEventRecordBytes = 48 + 8;
// Bounds of a configured or derived size (the kernel wants a power of two of pages; the floor is
// the compiled-in C2C_EVENTS_RINGBUF_BYTES, the cap keeps the locked kernel memory bounded).
inline constexpr uint64_t kMinEventsRingbufBytes = 1u << 20;
inline constexpr uint64_t kMaxEventsRingbufBytes = 1u << 30;
inline constexpr uint64_t kMaxDerivedEventsRingbufBytes = 64u << 20;

// Every task the kernel can number (pid_max) may start at once and each start is a fork record and,
// for a named thread, a rename record: room for 2 * pid_max records, rounded up to a power of two,
// within [1 MiB, 64 MiB]. pid_max 32768 -> 4 MiB (74,898 records); 4194304 -> 64 MiB.
uint32_t events_ringbuf_bytes_for(uint64_t pid_max);
// events_ringbuf_bytes_for(pid_max of this host); pid_max unreadable -> the 1 MiB floor.
uint32_t default_events_ringbuf_bytes(const std::filesystem::path& pid_max_file = "/proc/sys/kernel/pid_max");
// Why `bytes` cannot be a ring buffer size (a power of two in [1 MiB, 1 GiB]), or nullopt.
std::optional<std::string> events_ringbuf_bytes_problem(uint64_t bytes);

}  // namespace c2c::host

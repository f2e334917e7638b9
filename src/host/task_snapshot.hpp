// One full task listing for the daemon: the BPF task iterator when it can be loaded, else the
// procfs walker (same records; the reason for the fallback is kept for logs and metrics).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "host/procfs_walker.hpp"
#include "host/task_iter.hpp"

namespace c2c::host {

enum class SnapshotSource : uint8_t { BpfIterator, Procfs };
const char* to_string(SnapshotSource s);

class TaskSnapshotter {
 public:
  // allow_bpf = false forces the procfs walker (e.g. --no-bpf, or tests).
  explicit TaskSnapshotter(bool allow_bpf = true);
  SnapshotSource source() const { return iter_ ? SnapshotSource::BpfIterator : SnapshotSource::Procfs; }
  const std::string& fallback_reason() const { return fallback_reason_; }
  // Every thread (or only those of tgid). If the iterator fails mid-flight, this pass and later
  // ones use procfs and fallback_reason() says why.
  std::vector<TaskInfo> snapshot(std::optional<uint32_t> tgid = std::nullopt);

 private:
  std::unique_ptr<BpfTaskIterator> iter_;
  std::string fallback_reason_;
};

}  // namespace c2c::host

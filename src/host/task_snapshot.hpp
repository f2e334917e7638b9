// One full task listing for the daemon: the BPF task iterator when it can be loaded, else the
// procfs walker (same records; the reason for the fallback is kept for logs and metrics).
// A kernel may withhold whole processes from the iterator while /proc lists them (this project's
// CI host hides its TGID 1 from every iterator mode: src/host/README.md, "The iterator's blind
// spot"); those processes are walked in /proc after each iterator pass, so a snapshot always
// holds every thread /proc shows.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "host/procfs_walker.hpp"
#include "host/task_iter.hpp"

namespace c2c::host {

// TGIDs in `proc_tgids` of which the iterator's pass `iterated` holds no thread, sorted. A process
// that started after the pass is listed too (walking it is correct: it is alive).
std::vector<uint32_t> withheld_tgids(const std::vector<TaskInfo>& iterated, std::vector<uint32_t> proc_tgids);

enum class SnapshotSource : uint8_t { BpfIterator, Procfs };
const char* to_string(SnapshotSource s);

class TaskSnapshotter {
 public:
  // allow_bpf = false forces the procfs walker (e.g. --no-bpf, or tests).
  // cgroup_id_of: which cgroup's id the iterator's records carry.
  explicit TaskSnapshotter(bool allow_bpf = true, CgroupIdOf cgroup_id_of = CgroupIdOf::DefaultHierarchy);
  SnapshotSource source() const { return iter_ ? SnapshotSource::BpfIterator : SnapshotSource::Procfs; }
  const std::string& fallback_reason() const { return fallback_reason_; }
  // Every thread (or only those of tgid). If the iterator fails mid-flight, this pass and later
  // ones use procfs and fallback_reason() says why.
  std::vector<TaskInfo> snapshot(std::optional<uint32_t> tgid = std::nullopt);
  // The processes the last iterator pass missed and procfs filled in (empty with procfs only).
  const std::vector<uint32_t>& last_withheld() const { return withheld_; }

 private:
  std::unique_ptr<BpfTaskIterator> iter_;
  std::string fallback_reason_;
  std::vector<uint32_t> withheld_;
};

}  // namespace c2c::host

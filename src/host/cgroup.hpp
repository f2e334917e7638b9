// cgroup membership (/proc/<pid>/cgroup), cgroup mounts (/proc/self/mountinfo), the effective
// cpuset of a cgroup (the INV-6 envelope) and Kubernetes pod/container identity from a path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cpuset.hpp"
#include "host/parse_error.hpp"

namespace c2c::host {

// One line of /proc/<pid>/cgroup: "<hierarchy-id>:<controllers>:<path>".
// v2 (unified) is hierarchy 0 with no controllers; v1 lists controllers ("cpu,cpuacct",
// "name=systemd").
struct CgroupLine {
  uint32_t hierarchy = 0;
  std::vector<std::string> controllers;
  std::string path;
  bool unified() const { return hierarchy == 0 && controllers.empty(); }
  bool has_controller(std::string_view c) const;
  bool operator==(const CgroupLine&) const = default;
};

std::optional<std::vector<CgroupLine>> parse_proc_cgroup(std::string_view text, ParseError* err = nullptr);

// The path that identifies the task's pod/container: the v1 cpuset hierarchy on a hybrid or v1
// host (kubelet manages cpu/cpuset/memory there), else the unified path. Empty if no lines.
std::string primary_cgroup_path(const std::vector<CgroupLine>& lines);

// ---- mountinfo -------------------------------------------------------------------------------
struct MountEntry {
  std::string root;         // field 4: the mount's root within its filesystem
  std::string mount_point;  // field 5, octal escapes (\040) decoded
  std::string fs_type;      // after " - "
  std::string source;
  std::vector<std::string> super_options;  // v1 cgroup mounts list their controllers here
  bool operator==(const MountEntry&) const = default;
};
std::optional<std::vector<MountEntry>> parse_mountinfo(std::string_view text, ParseError* err = nullptr);

struct CgroupMount {
  std::filesystem::path mount_point;
  std::string root;  // cgroup path at the mount point ("/" normally, deeper inside containers)
};

// Where the cgroup hierarchies are mounted, found from mountinfo rather than assumed.
class CgroupMounts {
 public:
  static CgroupMounts from_mountinfo(const std::vector<MountEntry>& mounts);
  // Reads /proc/self/mountinfo.
  static std::optional<CgroupMounts> discover(ParseError* err = nullptr);

  const std::optional<CgroupMount>& unified() const { return unified_; }
  std::optional<CgroupMount> v1(std::string_view controller) const;

  // The directory of a cgroup path under a mount; nullopt if the path is outside the mount's root.
  static std::optional<std::filesystem::path> dir_of(const CgroupMount& m, std::string_view cgroup_path);

 private:
  std::optional<CgroupMount> unified_;
  std::vector<std::pair<std::string, CgroupMount>> v1_;  // controller -> mount
};

// The effective cpuset of the task whose cgroup lines are given: v1 cpuset.effective_cpus
// (or cpuset.cpus) under the cpuset controller's mount when the task has a cpuset line, else v2
// cpuset.cpus.effective, walking up to the nearest cgroup that has the file.
std::optional<CpuSet> effective_cpuset(const CgroupMounts& mounts, const std::vector<CgroupLine>& lines,
                                       ParseError* err = nullptr);

// ---- Kubernetes identity ---------------------------------------------------------------------
enum class CgroupDriver : uint8_t { Cgroupfs, Systemd };
enum class ContainerRuntime : uint8_t { None, Containerd, CriO, CriOConmon, Docker, Unknown };
enum class QosClass : uint8_t { Guaranteed, Burstable, BestEffort };
const char* to_string(CgroupDriver d);
const char* to_string(ContainerRuntime r);
const char* to_string(QosClass q);

struct PodCgroup {
  std::string pod_uid;        // canonical: dashed UUID, or the 32-hex static-pod hash
  std::string pod_cgroup;     // the path up to and including the pod component
  std::string container_id;   // empty for the pod-level cgroup
  ContainerRuntime runtime = ContainerRuntime::None;
  CgroupDriver driver = CgroupDriver::Cgroupfs;
  QosClass qos = QosClass::Guaranteed;
  bool operator==(const PodCgroup&) const = default;
};

// Recognises kubelet pod cgroups for the cgroupfs and systemd drivers, with or without a
// --cgroup-root prefix, and containerd / CRI-O / docker container cgroups below them.
// nullopt when the path is not under a kubepods pod cgroup.
std::optional<PodCgroup> parse_pod_cgroup(std::string_view path);

// Reads a whole (small) file; nullopt if it cannot be opened or read.
std::optional<std::string> read_file(const std::filesystem::path& p);

}  // namespace c2c::host

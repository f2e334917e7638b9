#include "host/cgroup.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "host/proc_stat.hpp"

namespace c2c::host {

namespace fs = std::filesystem;

std::optional<std::string> read_file(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i <= s.size()) {
    const size_t j = s.find(sep, i);
    if (j == std::string_view::npos) {
      out.push_back(s.substr(i));
      break;
    }
    out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_lower_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

// A Kubernetes pod UID: a dashed RFC 4122 UUID, or the 32-hex hash kubelet gives static pods.
bool is_pod_uid(std::string_view s) {
  if (s.size() == 32) return is_lower_hex(s);
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash_pos = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_pos != (s[i] == '-')) return false;
    if (!dash_pos && !is_lower_hex(s.substr(i, 1))) return false;
  }
  return true;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Octal escapes of mountinfo (space = \040, tab = \011, newline = \012, backslash = \134).
std::string unescape_octal(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const auto a = s[i + 1], b = s[i + 2], c = s[i + 3];
      if (a >= '0' && a <= '3' && b >= '0' && b <= '7' && c >= '0' && c <= '7') {
        out.push_back(static_cast<char>((a - '0') * 64 + (b - '0') * 8 + (c - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

}  // namespace

bool CgroupLine::has_controller(std::string_view c) const {
  return std::find(controllers.begin(), controllers.end(), c) != controllers.end();
}

std::optional<std::vector<CgroupLine>> parse_proc_cgroup(std::string_view text, ParseError* err) {
  std::vector<CgroupLine> out;
  size_t lineno = 0;
  for (std::string_view line : split(text, '\n')) {
    ++lineno;
    if (trim(line).empty()) continue;
    const std::string where = "cgroup line " + std::to_string(lineno);
    const size_t c1 = line.find(':');
    const size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) {
      set_error(err, where, "expected '<hierarchy-id>:<controllers>:<path>', got '" + std::string(line) + "'");
      return std::nullopt;
    }
    CgroupLine l;
    const auto id = parse_u64(line.substr(0, c1));
    if (!id || *id > 0xffffffffu) {
      set_error(err, where + " hierarchy-id", "not an integer: '" + std::string(line.substr(0, c1)) + "'");
      return std::nullopt;
    }
    l.hierarchy = static_cast<uint32_t>(*id);
    const std::string_view ctrls = line.substr(c1 + 1, c2 - c1 - 1);
    if (!ctrls.empty()) {
      for (auto c : split(ctrls, ',')) {
        if (c.empty()) {
          set_error(err, where + " controllers", "empty controller name in '" + std::string(ctrls) + "'");
          return std::nullopt;
        }
        l.controllers.emplace_back(c);
      }
    }
    l.path = std::string(line.substr(c2 + 1));  // a path may contain ':'
    if (l.path.empty() || l.path.front() != '/') {
      set_error(err, where + " path", "not absolute: '" + l.path + "'");
      return std::nullopt;
    }
    out.push_back(std::move(l));
  }
  return out;
}

std::string primary_cgroup_path(const std::vector<CgroupLine>& lines) {
  for (const char* c : {"cpuset", "cpu"}) {
    for (const auto& l : lines)
      if (l.has_controller(c)) return l.path;
  }
  for (const auto& l : lines)
    if (l.unified()) return l.path;
  return lines.empty() ? std::string{} : lines.front().path;
}

std::optional<std::vector<MountEntry>> parse_mountinfo(std::string_view text, ParseError* err) {
  std::vector<MountEntry> out;
  size_t lineno = 0;
  for (std::string_view line : split(text, '\n')) {
    ++lineno;
    if (trim(line).empty()) continue;
    std::vector<std::string_view> f;
    for (auto t : split(line, ' '))
      if (!t.empty()) f.push_back(t);
    const auto dash = std::find(f.begin(), f.end(), std::string_view("-"));
    const auto sep = static_cast<size_t>(dash - f.begin());
    if (dash == f.end() || sep < 6 || f.size() < sep + 3) {
      set_error(err, "mountinfo line " + std::to_string(lineno),
                "expected '<id> <parent> <dev> <root> <mount point> <options> ... - <type> <source> <super options>'");
      return std::nullopt;
    }
    MountEntry m;
    m.root = unescape_octal(f[3]);
    m.mount_point = unescape_octal(f[4]);
    m.fs_type = std::string(f[sep + 1]);
    m.source = unescape_octal(f[sep + 2]);
    if (f.size() > sep + 3)
      for (auto o : split(f[sep + 3], ',')) m.super_options.emplace_back(o);
    out.push_back(std::move(m));
  }
  return out;
}

CgroupMounts CgroupMounts::from_mountinfo(const std::vector<MountEntry>& mounts) {
  CgroupMounts cm;
  for (const auto& m : mounts) {
    if (m.fs_type == "cgroup2") {
      if (!cm.unified_) cm.unified_ = CgroupMount{m.mount_point, m.root};
    } else if (m.fs_type == "cgroup") {
      for (const auto& o : m.super_options) {
        // Controllers and "name=<hierarchy>" appear among the super options next to flags.
        static const char* const kFlags[] = {"rw", "ro", "relatime", "noatime", "nosuid", "nodev",
                                             "noexec", "clone_children", "noprefix", "xattr"};
        if (std::any_of(std::begin(kFlags), std::end(kFlags), [&](const char* fl) { return o == fl; })) continue;
        if (o.rfind("release_agent=", 0) == 0) continue;
        const bool known = std::any_of(cm.v1_.begin(), cm.v1_.end(), [&](const auto& p) { return p.first == o; });
        if (!known) cm.v1_.emplace_back(o, CgroupMount{m.mount_point, m.root});
      }
    }
  }
  return cm;
}

std::optional<CgroupMounts> CgroupMounts::discover(ParseError* err) {
  const auto text = read_file("/proc/self/mountinfo");
  if (!text) {
    set_error(err, "/proc/self/mountinfo", "cannot be read");
    return std::nullopt;
  }
  const auto mounts = parse_mountinfo(*text, err);
  if (!mounts) return std::nullopt;
  return from_mountinfo(*mounts);
}

std::optional<CgroupMount> CgroupMounts::v1(std::string_view controller) const {
  for (const auto& [c, m] : v1_)
    if (c == controller) return m;
  return std::nullopt;
}

std::optional<fs::path> CgroupMounts::dir_of(const CgroupMount& m, std::string_view cgroup_path) {
  std::string_view rel = cgroup_path;
  if (m.root != "/") {
    const std::string_view root = m.root;
    if (rel.substr(0, root.size()) != root || (rel.size() > root.size() && rel[root.size()] != '/'))
      return std::nullopt;
    rel.remove_prefix(root.size());
  }
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  return rel.empty() ? m.mount_point : m.mount_point / fs::path(rel);
}

std::optional<CpuSet> effective_cpuset(const CgroupMounts& mounts, const std::vector<CgroupLine>& lines,
                                       ParseError* err) {
  auto parse_file = [&](const fs::path& p) -> std::optional<CpuSet> {
    const auto text = read_file(p);
    if (!text) return std::nullopt;
    std::string why;
    auto set = CpuSet::parse(trim(*text), &why);
    if (!set) set_error(err, p.string(), why);
    return set;
  };
  for (const auto& l : lines) {
    if (!l.has_controller("cpuset")) continue;
    const auto m = mounts.v1("cpuset");
    if (!m) break;  // the cpuset hierarchy is not mounted here: try v2
    const auto dir = CgroupMounts::dir_of(*m, l.path);
    if (!dir) {
      set_error(err, "cgroup cpuset path", "'" + l.path + "' is outside the cpuset mount root '" + m->root + "'");
      return std::nullopt;
    }
    for (const char* f : {"cpuset.effective_cpus", "cpuset.cpus"}) {
      if (fs::exists(*dir / f)) return parse_file(*dir / f);
    }
    set_error(err, dir->string(), "has neither cpuset.effective_cpus nor cpuset.cpus");
    return std::nullopt;
  }
  for (const auto& l : lines) {
    if (!l.unified()) continue;
    if (!mounts.unified()) {
      set_error(err, "mountinfo", "no cgroup2 mount for the unified cgroup line '" + l.path + "'");
      return std::nullopt;
    }
    auto dir = CgroupMounts::dir_of(*mounts.unified(), l.path);
    if (!dir) {
      set_error(err, "cgroup v2 path", "'" + l.path + "' is outside the cgroup2 mount root");
      return std::nullopt;
    }
    // cpuset.cpus.effective exists only where the cpuset controller is enabled: walk up.
    const fs::path top = mounts.unified()->mount_point;
    for (fs::path d = *dir;; d = d.parent_path()) {
      if (fs::exists(d / "cpuset.cpus.effective")) return parse_file(d / "cpuset.cpus.effective");
      if (d == top || d == d.parent_path()) break;
    }
    set_error(err, dir->string(), "no cpuset.cpus.effective here or above (cpuset controller not enabled)");
    return std::nullopt;
  }
  set_error(err, "cgroup", "the task has neither a v1 cpuset line nor a v2 line");
  return std::nullopt;
}

// ---- Kubernetes identity ---------------------------------------------------------------------

const char* to_string(CgroupDriver d) { return d == CgroupDriver::Systemd ? "systemd" : "cgroupfs"; }
const char* to_string(ContainerRuntime r) {
  switch (r) {
    case ContainerRuntime::None: return "none";
    case ContainerRuntime::Containerd: return "containerd";
    case ContainerRuntime::CriO: return "cri-o";
    case ContainerRuntime::CriOConmon: return "cri-o-conmon";
    case ContainerRuntime::Docker: return "docker";
    case ContainerRuntime::Unknown: return "unknown";
  }
  return "unknown";
}
const char* to_string(QosClass q) {
  switch (q) {
    case QosClass::Guaranteed: return "Guaranteed";
    case QosClass::Burstable: return "Burstable";
    case QosClass::BestEffort: return "BestEffort";
  }
  return "Guaranteed";
}

namespace {

struct PodMatch {
  std::string uid;
  CgroupDriver driver;
  QosClass qos;
};

QosClass qos_from_word(std::string_view w, QosClass dflt) {
  if (w == "burstable") return QosClass::Burstable;
  if (w == "besteffort") return QosClass::BestEffort;
  return dflt;
}

// systemd: "<prefix words joined by '-'>-pod<uid with '_' for '-'>.slice", kubepods among the words.
std::optional<PodMatch> match_systemd_pod(std::string_view comp) {
  if (!ends_with(comp, ".slice")) return std::nullopt;
  const std::string_view stem = comp.substr(0, comp.size() - 6);
  const size_t pos = stem.rfind("-pod");
  if (pos == std::string_view::npos) return std::nullopt;
  std::string uid(stem.substr(pos + 4));
  std::replace(uid.begin(), uid.end(), '_', '-');
  if (!is_pod_uid(uid)) return std::nullopt;
  bool kubepods = false;
  QosClass qos = QosClass::Guaranteed;
  for (auto w : split(stem.substr(0, pos), '-')) {
    if (w == "kubepods") kubepods = true;
    qos = qos_from_word(w, qos);
  }
  if (!kubepods) return std::nullopt;
  return PodMatch{uid, CgroupDriver::Systemd, qos};
}

// cgroupfs: ".../kubepods[/<qos>]/pod<uid>" with the UID as is.
std::optional<PodMatch> match_cgroupfs_pod(const std::vector<std::string_view>& comps, size_t i) {
  const std::string_view comp = comps[i];
  if (comp.substr(0, 3) != "pod") return std::nullopt;
  const std::string_view uid = comp.substr(3);
  if (!is_pod_uid(uid)) return std::nullopt;
  if (std::find(comps.begin(), comps.begin() + static_cast<std::ptrdiff_t>(i), std::string_view("kubepods")) ==
      comps.begin() + static_cast<std::ptrdiff_t>(i))
    return std::nullopt;
  const QosClass qos = i > 0 ? qos_from_word(comps[i - 1], QosClass::Guaranteed) : QosClass::Guaranteed;
  return PodMatch{std::string(uid), CgroupDriver::Cgroupfs, qos};
}

void parse_container(std::string_view comp, PodCgroup& out) {
  std::string_view stem = comp;
  if (ends_with(stem, ".scope")) stem.remove_suffix(6);
  static const std::pair<std::string_view, ContainerRuntime> kPrefixes[] = {
      {"cri-containerd-", ContainerRuntime::Containerd},
      {"crio-conmon-", ContainerRuntime::CriOConmon},
      {"crio-", ContainerRuntime::CriO},
      {"docker-", ContainerRuntime::Docker},
  };
  ContainerRuntime rt = ContainerRuntime::Unknown;  // a bare id (cgroupfs layout of containerd/docker)
  for (const auto& [prefix, r] : kPrefixes) {
    if (stem.substr(0, prefix.size()) == prefix) {
      stem.remove_prefix(prefix.size());
      rt = r;
      break;
    }
  }
  // Container ids are 64 hex digits; shorter hex ids are accepted, anything else is not a container.
  if (stem.size() < 12 || !is_lower_hex(stem)) return;
  out.container_id = std::string(stem);
  out.runtime = rt;
}

}  // namespace

std::optional<PodCgroup> parse_pod_cgroup(std::string_view path) {
  std::vector<std::string_view> comps;
  for (auto c : split(path, '/'))
    if (!c.empty()) comps.push_back(c);
  // The deepest pod component wins; nothing is anchored at the root, so a --cgroup-root prefix
  // (e.g. /kubelet.slice/kubelet-kubepods.slice/...) is tolerated.
  for (size_t k = comps.size(); k-- > 0;) {
    std::optional<PodMatch> m = match_systemd_pod(comps[k]);
    if (!m) m = match_cgroupfs_pod(comps, k);
    if (!m) continue;
    PodCgroup out;
    out.pod_uid = m->uid;
    out.driver = m->driver;
    out.qos = m->qos;
    for (size_t j = 0; j <= k; ++j) {
      out.pod_cgroup += '/';
      out.pod_cgroup += comps[j];
    }
    if (k + 1 < comps.size()) parse_container(comps[k + 1], out);
    return out;
  }
  return std::nullopt;
}

}  // namespace c2c::host

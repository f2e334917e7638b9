#include "host/bpf_object_path.hpp"

#include <cstdlib>
#include <mutex>
#include <system_error>

namespace c2c::host {

namespace fs = std::filesystem;

namespace {
std::mutex g_override_mu;
std::string g_override;  // guarded by g_override_mu (set at start and on SIGHUP)
}  // namespace

void set_bpf_object_dir_override(const std::string& dir) {
  std::lock_guard lk(g_override_mu);
  g_override = dir;
}

std::optional<fs::path> build_tree_of(const fs::path& exe) {
  std::error_code ec;
  for (fs::path d = exe.parent_path(); !d.empty(); d = d.parent_path()) {
    if (fs::is_regular_file(d / "CMakeCache.txt", ec)) return d;
    if (d == d.root_path()) break;
  }
  return std::nullopt;
}

std::vector<fs::path> bpf_object_dirs() {
  std::vector<fs::path> dirs;
  {
    std::lock_guard lk(g_override_mu);
    if (!g_override.empty()) dirs.emplace_back(g_override);
  }
  if (const char* env = std::getenv("C2C_BPF_DIR"); env != nullptr && *env != '\0') dirs.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back((exe.parent_path() / kInstallRelativeBpfDir).lexically_normal());
    if (auto tree = build_tree_of(exe)) dirs.push_back(*tree / "bpf");
  }
  dirs.emplace_back("/usr/lib/claim2core");
  return dirs;
}

std::optional<fs::path> find_bpf_object(const std::string& name, std::string* err) {
  std::string tried;
  for (const auto& d : bpf_object_dirs()) {
    const fs::path p = d / (name + ".bpf.o");
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p;
    tried += (tried.empty() ? "" : ", ") + p.string();
  }
  if (err != nullptr)
    *err = "BPF object '" + name + ".bpf.o' not found (set bpf_dir in the config or C2C_BPF_DIR); tried " + tried;
  return std::nullopt;
}

}  // namespace c2c::host

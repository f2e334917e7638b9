#include "host/bpf_object_path.hpp"

#include <cstdlib>
#include <system_error>

namespace c2c::host {

namespace fs = std::filesystem;

std::vector<fs::path> bpf_object_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("C2C_BPF_DIR"); env != nullptr && *env != '\0') dirs.emplace_back(env);
#ifdef C2C_BPF_BUILD_DIR
  dirs.emplace_back(C2C_BPF_BUILD_DIR);
#endif
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "lib/claim2core/bpf");
  dirs.emplace_back("/usr/lib/claim2core/bpf");
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
  if (err != nullptr) *err = "BPF object '" + name + ".bpf.o' not found (set C2C_BPF_DIR); tried " + tried;
  return std::nullopt;
}

}  // namespace c2c::host

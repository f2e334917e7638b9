#include "rest/gui_dir.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>

namespace c2c::rest {
namespace {

// glibc 2.36 has no wrapper for openat2(2).
int open_beneath(int dirfd, const std::string& rel) {
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof how));
}

}  // namespace

std::optional<std::string> gui_path_problem(const std::string& path) {
  if (path.empty() || path[0] != '/') return "not an absolute path";
  if (path.find('\0') != std::string::npos) return "a NUL byte";
  if (path.find('\\') != std::string::npos) return "a backslash";
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (path.compare(start, end - start, "..") == 0) return "a '..' segment";
    start = end + 1;
  }
  return std::nullopt;
}

std::string gui_content_type(const std::string& name) {
  static const std::map<std::string, std::string> types = {
      {"html", "text/html; charset=utf-8"}, {"js", "text/javascript; charset=utf-8"},
      {"mjs", "text/javascript; charset=utf-8"}, {"css", "text/css; charset=utf-8"},
      {"json", "application/json"}, {"map", "application/json"}, {"svg", "image/svg+xml"},
      {"png", "image/png"}, {"jpg", "image/jpeg"}, {"jpeg", "image/jpeg"}, {"gif", "image/gif"},
      {"webp", "image/webp"}, {"ico", "image/x-icon"}, {"woff", "font/woff"}, {"woff2", "font/woff2"},
      {"ttf", "font/ttf"}, {"txt", "text/plain; charset=utf-8"}, {"wasm", "application/wasm"}};
  auto slash = name.rfind('/');
  auto dot = name.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "application/octet-stream";
  auto it = types.find(name.substr(dot + 1));
  return it == types.end() ? "application/octet-stream" : it->second;
}

GuiDir::GuiDir(const std::string& dir) : dir_(dir) {
  dirfd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd_ < 0) throw std::runtime_error("--gui-dir " + dir + ": " + std::strerror(errno));
  struct stat st{};
  if (::fstatat(dirfd_, "index.html", &st, 0) != 0 || !S_ISREG(st.st_mode))
    throw std::runtime_error("--gui-dir " + dir + " holds no index.html (give the built GUI's folder, e.g. web/dist)");
}

GuiDir::~GuiDir() {
  if (dirfd_ >= 0) ::close(dirfd_);
}

std::variant<GuiFile, Reply> GuiDir::read(const std::string& rel, bool* missing) const {
  *missing = false;
  int fd = open_beneath(dirfd_, rel);
  if (fd < 0) {
    int e = errno;
    if (e == EXDEV || e == ELOOP) return fail(400, "path traversal refused", "path");  // left the folder
    if (e == ENOENT || e == ENOTDIR) {
      *missing = true;
      return fail(404, "not found");
    }
    return fail(e == EACCES ? 403 : 500, "cannot open " + rel + ": " + std::strerror(e));
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    *missing = S_ISDIR(st.st_mode);  // a folder: the SPA's route, like a missing file
    return fail(404, "not found");
  }
  if (static_cast<size_t>(st.st_size) > kMaxGuiFileBytes) {
    ::close(fd);
    return fail(500, rel + " is larger than " + std::to_string(kMaxGuiFileBytes) + " bytes");
  }
  GuiFile f;
  f.content.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < f.content.size()) {
    ssize_t n = ::read(fd, f.content.data() + got, f.content.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  f.content.resize(got);  // a file that shrank meanwhile
  f.content_type = gui_content_type(rel);
  f.etag = "\"" + std::to_string(st.st_size) + "-" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + "\"";
  return f;
}

std::variant<GuiFile, Reply> GuiDir::get(const std::string& path) const {
  if (auto p = gui_path_problem(path)) return fail(400, "path traversal refused: " + *p, "path");
  std::string rel = path.substr(1);
  if (rel.empty() || rel.back() == '/') rel += "index.html";
  bool missing = false;
  auto r = read(rel, &missing);
  if (!missing) return r;
  // No such file: a path whose last segment has no extension is a route of the SPA (the
  // original's frontend falls back to index.html the same way); a missing asset stays 404.
  auto last = rel.substr(rel.rfind('/') == std::string::npos ? 0 : rel.rfind('/') + 1);
  if (last.find('.') != std::string::npos) return r;
  return read("index.html", &missing);
}

}  // namespace c2c::rest

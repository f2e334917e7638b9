#include "host/durable_file.hpp"

#include "host/file_ops.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace c2c::host {

// Appended piecewise: GCC 12's -Wrestrict misfires on the chained operator+ form.
std::string sys_error(const char* what, const std::string& path) {
  const char* why = std::strerror(errno);
  std::string r;
  r.reserve(std::strlen(what) + path.size() + std::strlen(why) + 3);
  r.append(what).append(" ").append(path).append(": ").append(why);
  return r;
}

std::string fsync_parent_dir(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  FileOps& fs = file_ops();
  int dfd = fs.open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (dfd < 0) return sys_error("open", dir);
  int rc = fs.fsync(dfd);
  std::string e = rc != 0 ? sys_error("fsync", dir) : "";
  fs.close(dfd);
  return e;
}

std::string write_file_durably(const std::string& path, const std::string& bytes, int mode) {
  // The order is the promise (a power loss leaves the old or the new file): the data synced before
  // the rename makes it visible, the directory synced after it before anyone is told.
  FileOps& fs = file_ops();
  const std::string tmp = path + ".tmp";
  int fd = fs.open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) return sys_error("open", tmp);
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = fs.write(fd, bytes.data() + off, bytes.size() - off);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) errno = EIO;  // a regular file never takes nothing; do not spin on it
      std::string e = sys_error("write", tmp);
      fs.close(fd);
      return e;
    }
    off += static_cast<size_t>(n);
  }
  if (fs.fsync(fd) != 0) {
    std::string e = sys_error("fsync", tmp);
    fs.close(fd);
    return e;
  }
  fs.close(fd);
  if (fs.rename(tmp.c_str(), path.c_str()) != 0) return sys_error("rename", tmp);
  return fsync_parent_dir(path);
}

}  // namespace c2c::host

#include "kernel/pins.hpp"

#include <bpf/bpf.h>
#include <sys/stat.h>

#include "kernel/errno_text.hpp"

namespace c2c::kernel {

OpenedPin open_pin(const std::string& path) {
  OpenedPin p;
  const int fd = bpf_obj_get(path.c_str());
  if (fd >= 0) {
    p.fd = UniqueFd(fd);
    return p;
  }
  p.error = errno;  // libbpf returns -errno and sets errno
  p.what = "pin " + path + ": cannot open: " + errno_text(p.error);
  return p;
}

std::string pin_object(int fd, const std::string& path) {
  if (bpf_obj_pin(fd, path.c_str()) != 0) return "pin " + path + ": cannot pin: " + errno_text(errno);
  return "";
}

std::string make_pin_dirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      return "cannot create pin directory " + part + ": " + errno_text(errno);
  }
  return "";
}

}  // namespace c2c::kernel

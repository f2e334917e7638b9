// Pins on bpffs: opening what is pinned at a path, pinning a held fd, the pin directory. The only
// code that calls bpf_obj_get / bpf_obj_pin (tests/unit/daemon_layering_check.py, rule 3).
#pragma once

#include <cerrno>
#include <string>

#include "kernel/unique_fd.hpp"

namespace c2c::kernel {

struct OpenedPin {
  UniqueFd fd;        // the object's fd; invalid when the open failed
  int error = 0;      // its errno (ENOENT: nothing pinned there), 0 when opened
  std::string what;   // "pin <path>: cannot open: <why>" when it failed
  bool missing() const { return error == ENOENT; }
};

// Opens the object pinned at path (a map, a program, a link). Checks nothing about it: a map's
// layout is checked_map()'s job (map_check.hpp).
OpenedPin open_pin(const std::string& path);

// Pins the object behind fd at path. "" or "pin <path>: cannot pin: <why>".
std::string pin_object(int fd, const std::string& path);

// Creates dir and its missing parents (0700). "" or "cannot create pin directory <dir>: <why>".
std::string make_pin_dirs(const std::string& dir);

}  // namespace c2c::kernel

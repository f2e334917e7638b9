// --gui-dir DIR: a static web GUI folder given by the operator (the original's built web GUI),
// served from the gateway's own origin so it needs neither a proxy nor CORS (issue 47).
//
// Files are opened with openat2(2) and RESOLVE_BENEATH relative to the folder opened once at
// start: the kernel refuses every path that leaves it ("..", an absolute symlink, a symlink
// pointing out), whatever the encoding the request used. A request path holding a ".." segment,
// a backslash or a NUL is refused before that (400 "path traversal refused"), and only regular
// files are served (a FIFO is not waited on), at most kMaxGuiFileBytes each. A path with no file
// and no extension is the SPA's own route: index.html, as the original's frontend does.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "rest/envelope.hpp"

namespace c2c::rest {

inline constexpr size_t kMaxGuiFileBytes = 32u << 20;

struct GuiFile {
  std::string content;
  std::string content_type;
  std::string etag;  // size and modification time: a rebuilt GUI is fetched again
};

// Why a URL path (already percent-decoded) must not be looked up at all, or nullopt.
std::optional<std::string> gui_path_problem(const std::string& path);
// The Content-Type for a file name, by its extension.
std::string gui_content_type(const std::string& name);

class GuiDir {
 public:
  // Opens the folder; throws std::runtime_error naming --gui-dir and the path.
  explicit GuiDir(const std::string& dir);
  ~GuiDir();
  GuiDir(const GuiDir&) = delete;
  GuiDir& operator=(const GuiDir&) = delete;

  // The file for a GET of this URL path, or the refusal (400 traversal, 404, 500).
  std::variant<GuiFile, Reply> get(const std::string& path) const;

 private:
  std::variant<GuiFile, Reply> read(const std::string& rel, bool* missing) const;
  int dirfd_ = -1;
  std::string dir_;
};

}  // namespace c2c::rest

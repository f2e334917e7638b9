// The one durable-write helper (the daemon's state, the mirror's generation file): a file replaced atomically (temp + fsync + rename +
// fsync of the directory), so a crash leaves the old or the new content, never a torn one, and
// the rename itself survives a power cut. Errors name the file and the step ("write
// /var/lib/claim2core/state.json.tmp: No space left on device").
#pragma once

#include <string>

namespace c2c::host {

// "" or the error.
std::string write_file_durably(const std::string& path, const std::string& bytes, int mode = 0600);
// fsync of the directory holding `path` (a rename or a new file in it is durable after this).
std::string fsync_parent_dir(const std::string& path);
// "<what> <path>: <strerror(errno)>", the form every durable-state error takes.
std::string sys_error(const char* what, const std::string& path);

}  // namespace c2c::host

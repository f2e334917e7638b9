#include "daemon/durable/state_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "host/durable_file.hpp"
#include "host/file_ops.hpp"

namespace c2c::daemon {
namespace {

uint32_t crc_of(const char* p, size_t n) {
  return static_cast<uint32_t>(::crc32(::crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(p), static_cast<uInt>(n)));
}

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t get_u32(const std::string& b, size_t off) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(b[off + i])) << (8 * i);
  return v;
}

}  // namespace

std::string frame_record(const std::string& payload) {
  std::string out;
  out.reserve(8 + payload.size());
  put_u32(out, static_cast<uint32_t>(payload.size()));
  put_u32(out, crc_of(payload.data(), payload.size()));
  out += payload;
  return out;
}

LogScan scan_log(const std::string& b) {
  LogScan s;
  size_t off = 0;
  auto rest_is_zero = [&](size_t from) { return std::all_of(b.begin() + static_cast<std::ptrdiff_t>(from), b.end(), [](char c) { return c == 0; }); };
  while (off < b.size()) {
    std::string why;
    size_t end = 0;
    if (b.size() - off < 8) {
      why = "a record header cut short";
      end = b.size();
    } else {
      uint32_t len = get_u32(b, off);
      end = off + 8 + len;
      if (len == 0) why = "an empty record (zero fill?)";  // never written: a payload is a JSON object
      else if (len > kMaxLogRecord) why = "a record length of " + std::to_string(len) + " bytes";
      else if (end > b.size()) why = "a record cut short (" + std::to_string(b.size() - off - 8) + " of " + std::to_string(len) + " bytes)";
      else if (crc_of(b.data() + off + 8, len) != get_u32(b, off + 4)) why = "a record whose checksum does not match";
    }
    if (why.empty()) {
      s.records.emplace_back(b, off + 8, end - off - 8);
      off = end;
      s.valid_bytes = off;
      continue;
    }
    // A crash tears only the last append: the bad record reaches the end of the file (or what
    // follows is the zero fill of a file extended before its data reached the disk).
    if (end >= b.size() || rest_is_zero(off)) {
      s.dropped = "offset " + std::to_string(off) + ": " + why + " at the end (a torn last append): dropped";
    } else {
      s.error = "offset " + std::to_string(off) + ": " + why + ", and records follow it (damaged, not torn)";
    }
    return s;
  }
  return s;
}

std::unique_ptr<StateLog> StateLog::open(const std::string& path, LogScan* scan, std::string* err) {
  host::FileOps& fs = host::file_ops();
  int fd = fs.open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    *err = host::sys_error("open", path);
    return nullptr;
  }
  std::string bytes;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *err = host::sys_error("read", path);
      fs.close(fd);
      return nullptr;
    }
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  *scan = scan_log(bytes);
  if (!scan->error.empty()) {
    *err = path + ": " + scan->error;
    fs.close(fd);
    return nullptr;
  }
  if (scan->valid_bytes != bytes.size() &&
      (fs.ftruncate(fd, static_cast<off_t>(scan->valid_bytes)) != 0 || fs.fsync(fd) != 0)) {
    *err = host::sys_error("cutting the torn tail off", path);
    fs.close(fd);
    return nullptr;
  }
  if (::lseek(fd, static_cast<off_t>(scan->valid_bytes), SEEK_SET) < 0) {
    *err = host::sys_error("lseek", path);
    fs.close(fd);
    return nullptr;
  }
  // A new file's directory entry must be durable before the first record relies on it.
  if (auto e = host::fsync_parent_dir(path); !e.empty()) {
    *err = e;
    fs.close(fd);
    return nullptr;
  }
  return std::unique_ptr<StateLog>(new StateLog(path, fd, scan->valid_bytes));
}

StateLog::~StateLog() {
  if (fd_ >= 0) host::file_ops().close(fd_);
}

std::string StateLog::append(const std::string& payload) {
  if (broken_) return path_ + ": a failed append could not be cut back (the next snapshot empties it)";
  host::FileOps& fs = host::file_ops();
  const std::string rec = frame_record(payload);
  size_t off = 0;
  std::string e;
  while (off < rec.size()) {
    ssize_t n = fs.pwrite(fd_, rec.data() + off, rec.size() - off, static_cast<off_t>(size_ + off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      e = host::sys_error("write", path_);
      break;
    }
    off += static_cast<size_t>(n);
  }
  // The reply waits for this: the record is durable (data and the size that reaches it) first.
  if (e.empty() && fs.fdatasync(fd_) != 0) e = host::sys_error("fdatasync", path_);
  if (e.empty()) {
    size_ += rec.size();
    return "";
  }
  if (fs.ftruncate(fd_, static_cast<off_t>(size_)) != 0) broken_ = true;
  reserved_end_ = size_;  // the truncation freed the blocks beyond the end
  return e;
}

std::string StateLog::reserve(uint64_t bytes) {
  if (broken_) return path_ + ": a failed append could not be cut back";
  if (size_ + bytes <= reserved_end_) return "";
  // A chunk ahead, so that a run of small records costs one fallocate; just what is asked when
  // the chunk does not fit (the file system is nearly full: the caller decides on that).
  constexpr uint64_t kChunk = 1u << 20;
  for (uint64_t len : {bytes + kChunk, bytes}) {
    if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(size_), static_cast<off_t>(len)) == 0) {
      reserved_end_ = size_ + len;
      return "";
    }
    if (errno != ENOSPC) break;
  }
  return host::sys_error("fallocate", path_);
}

std::string StateLog::reset() {
  host::FileOps& fs = host::file_ops();
  if (fs.ftruncate(fd_, 0) != 0) return host::sys_error("ftruncate", path_);
  if (fs.fsync(fd_) != 0) return host::sys_error("fsync", path_);
  size_ = 0;
  reserved_end_ = 0;
  broken_ = false;
  return "";
}

uint64_t StateLog::free_bytes() const {
  struct statvfs v {};
  if (::fstatvfs(fd_, &v) != 0) return 0;
  return static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
}

}  // namespace c2c::daemon

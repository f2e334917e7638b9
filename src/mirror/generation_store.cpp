#include "mirror/generation_store.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>

#include "core/fnv.hpp"
#include "core/model.hpp"
#include "host/durable_file.hpp"

namespace c2c::mirror {

namespace {

constexpr const char* kMagic = "c2c-generation v1 ";
constexpr size_t kMaxFile = 128;
// INV-4's bound (spec/state-machine.md, "Bounds"): no generation this file holds, or a lease
// hands out, passes 2^53; a restart would ignore entries beyond it and step back.
constexpr uint64_t kBound = static_cast<uint64_t>(kMaxGeneration);

std::string beyond_bound(uint64_t g) {
  return "generation " + std::to_string(g) + " is beyond 2^53, the bound (INV-4: a restart ignores entries above it, "
         "so generations would go back)";
}

std::string render(uint64_t value) {
  std::string body = std::string(kMagic) + std::to_string(value);
  char sum[17];
  std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(fnv1a64(body)));
  return body + " " + sum + "\n";
}

// Parses the whole file text; nullopt-like failure through `error`.
bool parse(const std::string& text, uint64_t* value, std::string* error) {
  const std::string magic = kMagic;
  if (text.empty()) return *error = "empty file", false;
  if (text.back() != '\n') return *error = "no trailing newline (truncated?)", false;
  if (text.compare(0, magic.size(), magic) != 0) return *error = "does not start with '" + magic + "'", false;
  size_t space = text.find(' ', magic.size());
  if (space == std::string::npos) return *error = "no checksum", false;
  const char* first = text.data() + magic.size();
  const char* last = text.data() + space;
  auto [ptr, ec] = std::from_chars(first, last, *value);
  if (ec != std::errc() || ptr != last || first == last) return *error = "generation is not a decimal u64", false;
  std::string sum = text.substr(space + 1, text.size() - space - 2);
  char want[17];
  std::snprintf(want, sizeof want, "%016llx", static_cast<unsigned long long>(fnv1a64(text.substr(0, space))));
  if (sum != want) return *error = "checksum " + sum + " does not match " + want, false;
  return true;
}

}  // namespace

Result<uint64_t> load_generation(const std::string& path) {
  using R = Result<uint64_t>;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return R::ok(0);  // first start on this node
    return R::fail("generation file: " + host::sys_error("cannot open", path));
  }
  std::string text;
  char buf[kMaxFile + 1];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string e = host::sys_error("cannot read", path);
      ::close(fd);
      return R::fail("generation file: " + e);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxFile) break;
  }
  ::close(fd);
  uint64_t value = 0;
  std::string why;
  if (text.size() > kMaxFile) why = "larger than " + std::to_string(kMaxFile) + " bytes";
  if (why.empty()) parse(text, &value, &why);
  if (why.empty() && value > kBound)
    return R::fail("generation file " + path + ": " + beyond_bound(value) +
                   "; refused: restore a file from this node, or start this node afresh knowingly");
  if (!why.empty())
    return R::fail("generation file " + path + " is corrupt (" + why +
                   "); refusing to guess a generation (INV-4): restore it or remove it knowingly");
  return R::ok(value);
}

std::string store_generation(const std::string& path, uint64_t value) {
  if (value > kBound) return beyond_bound(value) + "; not stored in " + path;
  auto stored = load_generation(path);
  if (!stored) return stored.error() + "; not overwritten";
  if (value < stored.value())
    return "generation " + std::to_string(value) + " is below the stored " + std::to_string(stored.value()) +
           " in " + path + "; refused (INV-4: generations never go back)";
  if (value == stored.value() && value != 0) return "";
  return host::write_file_durably(path, render(value));
}

Result<GenerationLease> GenerationLease::open(const std::string& path, uint64_t lease) {
  using R = Result<GenerationLease>;
  if (lease == 0) return R::fail("lease: must be >= 1");
  auto stored = load_generation(path);
  if (!stored) return R::fail(stored.error());
  GenerationLease g;
  g.path_ = path;
  g.lease_ = lease;
  g.floor_ = g.high_ = g.durable_ = stored.value();
  return R::ok(std::move(g));
}

Result<uint64_t> GenerationLease::next() {
  using R = Result<uint64_t>;
  if (high_ >= kBound) return R::fail("generation space exhausted: " + beyond_bound(high_ + 1));
  uint64_t g = high_ + 1;
  if (std::string e = cover(g); !e.empty()) return R::fail(e);
  return R::ok(g);
}

std::string GenerationLease::refuse_at_floor(uint64_t g) const {
  if (g > kBound) return beyond_bound(g) + "; refused";
  if (g <= floor_)
    return "generation " + std::to_string(g) + " is not above " + std::to_string(floor_) +
           ", which an earlier process may have used; refused (INV-4)";
  return "";
}

std::string GenerationLease::store_ceiling(uint64_t g, uint64_t step) {
  // The ceiling stops at the bound: no generation above it can ever be covered.
  const uint64_t ceiling = g > kBound - std::min(step, kBound) ? kBound : g + step;
  if (std::string e = store_generation(path_, ceiling); !e.empty()) return e;
  durable_ = ceiling;
  ++syncs_;
  return "";
}

std::string GenerationLease::cover(uint64_t g) {
  if (std::string e = refuse_at_floor(g); !e.empty()) return e;
  if (g > durable_) {
    // Persist the ceiling before anyone can see g (write-ahead).
    if (std::string e = store_ceiling(g, lease_ - 1); !e.empty()) return e;
  }
  if (g > high_) high_ = g;
  return "";
}

std::string GenerationLease::keep_ahead(uint64_t g, uint64_t margin) {
  if (std::string e = refuse_at_floor(g); !e.empty()) return e;
  const uint64_t wanted = g > kBound - std::min(margin, kBound) ? kBound : g + margin;
  if (durable_ >= wanted) return "";
  return store_ceiling(g, std::max(margin, lease_ - 1));
}

}  // namespace c2c::mirror

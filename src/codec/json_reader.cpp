#include "codec/json_reader.hpp"

#include <limits>
#include <set>
#include <string_view>
#include <vector>

#include "core/names.hpp"

namespace c2c::codec {

using nlohmann::json;

Reader::Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
  if (!j_.is_object()) throw DecodeError(path_.empty() ? "(root)" : path_, "must be an object, got " + std::string(j_.type_name()));
}

std::string Reader::at(const char* key) const { return path_.empty() ? std::string(key) : path_ + "." + key; }

void Reader::fail(const char* key, const std::string& message) const { throw DecodeError(at(key), message); }

bool Reader::has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

const json& Reader::member(const char* key) const {
  if (!has(key)) fail(key, "is required");
  return j_.at(key);
}

Reader Reader::child(const char* key) const { return Reader(member(key), at(key)); }

std::optional<Reader> Reader::opt_child(const char* key) const {
  if (!has(key)) return std::nullopt;
  return Reader(j_.at(key), at(key));
}

std::vector<Reader> Reader::array(const char* key) const {
  std::vector<Reader> out;
  if (!has(key)) return out;
  const json& a = j_.at(key);
  if (!a.is_array()) fail(key, "must be an array");
  for (size_t i = 0; i < a.size(); ++i) out.emplace_back(a[i], at(key) + "[" + std::to_string(i) + "]");
  return out;
}

std::string Reader::str(const char* key) const {
  const json& v = member(key);
  if (!v.is_string()) fail(key, "must be a string, got " + std::string(v.type_name()));
  return v.get<std::string>();
}

std::string Reader::str_or(const char* key, const std::string& fallback) const { return has(key) ? str(key) : fallback; }

std::string Reader::name(const char* key) const {
  const json& v = member(key);
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_object()) fail(key, "must be a string or {\"hex\": ...}, got " + std::string(v.type_name()));
  const Reader form(v, at(key));
  form.only({"hex"});
  const std::string hex = form.str("hex");
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) form.fail("hex", "must have two hex digits a byte, got " + std::to_string(hex.size()) + " digits");
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = digit(hex[i]), lo = digit(hex[i + 1]);
    if (hi < 0 || lo < 0) form.fail("hex", "not a hex digit at offset " + std::to_string(hi < 0 ? i : i + 1));
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

std::string Reader::name_or(const char* key, const std::string& fallback) const { return has(key) ? name(key) : fallback; }

json encode_name(const std::string& bytes) {
  if (is_utf8(bytes)) return bytes;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    hex += kHex[c >> 4];
    hex += kHex[c & 0xf];
  }
  return json{{"hex", std::move(hex)}};
}

int64_t Reader::i64(const char* key) const {
  const json& v = member(key);
  if (!v.is_number_integer()) fail(key, "must be an integer, got " + std::string(v.type_name()));
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    fail(key, "is out of range");
  return v.get<int64_t>();
}

int64_t Reader::i64_or(const char* key, int64_t fallback) const { return has(key) ? i64(key) : fallback; }

uint64_t Reader::u64(const char* key) const {
  const json& v = member(key);
  if (!v.is_number_integer()) fail(key, "must be a non-negative integer, got " + std::string(v.type_name()));
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0) fail(key, "must not be negative");
  return v.get<uint64_t>();
}

uint64_t Reader::u64_or(const char* key, uint64_t fallback) const { return has(key) ? u64(key) : fallback; }

uint32_t Reader::u32(const char* key) const {
  uint64_t v = u64(key);
  if (v > std::numeric_limits<uint32_t>::max()) fail(key, "is out of range for a 32-bit value");
  return static_cast<uint32_t>(v);
}

bool Reader::boolean_or(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  const json& v = j_.at(key);
  if (!v.is_boolean()) fail(key, "must be true or false, got " + std::string(v.type_name()));
  return v.get<bool>();
}

std::optional<CpuSet> Reader::cpus(const char* key) const {
  if (!has(key)) return std::nullopt;
  std::string text = str(key);
  std::string error;
  auto s = CpuSet::parse(text, &error);
  if (!s) fail(key, "invalid CPU list: " + error);
  return s;
}

std::map<std::string, std::string> Reader::string_map(const char* key) const {
  std::map<std::string, std::string> out;
  if (!has(key)) return out;
  const json& m = j_.at(key);
  if (!m.is_object()) fail(key, "must be an object of strings");
  for (const auto& [k, v] : m.items()) {
    if (!v.is_string()) throw DecodeError(at(key) + "." + k, "must be a string, got " + std::string(v.type_name()));
    out[k] = v.get<std::string>();
  }
  return out;
}

std::vector<std::string> Reader::strings(const char* key) const {
  std::vector<std::string> out;
  if (!has(key)) return out;
  const json& a = j_.at(key);
  if (!a.is_array()) fail(key, "must be an array of strings");
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string()) throw DecodeError(at(key) + "[" + std::to_string(i) + "]", "must be a string");
    out.push_back(a[i].get<std::string>());
  }
  return out;
}

std::vector<int> Reader::ints(const char* key) const {
  std::vector<int> out;
  if (!has(key)) return out;
  const json& a = j_.at(key);
  if (!a.is_array()) fail(key, "must be an array of integers");
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string f = at(key) + "[" + std::to_string(i) + "]";
    if (!a[i].is_number_integer()) throw DecodeError(f, "must be an integer");
    int64_t v = a[i].get<int64_t>();
    if (v < 0 || v > 1023) throw DecodeError(f, "out of range [0, 1023]");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

uint64_t Reader::duration_ns_or(const char* key, uint64_t fallback) const {
  if (!has(key)) return fallback;
  const json& v = j_.at(key);
  if (v.is_number_integer()) return u64(key);
  if (!v.is_string()) fail(key, "must be a duration such as \"30s\"");
  auto ns = parse_duration_ns(v.get<std::string>());
  if (!ns) fail(key, "invalid duration '" + echo(v.get<std::string>()) + "' (use e.g. \"500ms\", \"30s\", \"1m\")");
  return *ns;
}

void Reader::only(std::initializer_list<const char*> known) const {
  for (const auto& [k, v] : j_.items()) {
    bool ok = false;
    for (const char* n : known) ok = ok || k == n;
    if (!ok) throw DecodeError(at(k.c_str()), "unknown field");
  }
}

std::optional<uint64_t> parse_duration_ns(const std::string& s) {
  // Go's time.ParseDuration: [+]? ( digits [. digits] | . digits ) unit, repeated; "0" alone.
  // Like Go, the fraction is scaled in floating point (it only has to be right to the nanosecond).
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  size_t i = 0;
  if (i < s.size() && s[i] == '+') ++i;
  if (i < s.size() && s[i] == '-') return std::nullopt;  // a negative duration bounds nothing here
  if (s.substr(i) == "0") return 0;
  if (i == s.size()) return std::nullopt;
  uint64_t total = 0;
  auto is_digit = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '9'; };
  while (i < s.size()) {
    uint64_t whole = 0, frac = 0, scale = 1;
    bool any = false;
    while (is_digit(i)) {
      const uint64_t d = static_cast<uint64_t>(s[i++] - '0');
      if (whole > (kMax - d) / 10) return std::nullopt;
      whole = whole * 10 + d;
      any = true;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (is_digit(i)) {
        if (scale <= kMax / 100) {  // further digits cannot change a nanosecond count
          frac = frac * 10 + static_cast<uint64_t>(s[i] - '0');
          scale *= 10;
        }
        ++i;
        any = true;
      }
    }
    if (!any) return std::nullopt;
    size_t u = i;
    while (i < s.size() && !is_digit(i) && s[i] != '.') ++i;
    const std::string unit = s.substr(u, i - u);
    uint64_t mult = 0;
    if (unit == "ns") mult = 1;
    else if (unit == "us" || unit == "\u00b5s" || unit == "\u03bcs") mult = 1'000;
    else if (unit == "ms") mult = 1'000'000;
    else if (unit == "s") mult = 1'000'000'000;
    else if (unit == "m") mult = 60'000'000'000ull;
    else if (unit == "h") mult = 3'600'000'000'000ull;
    else return std::nullopt;  // a unit is required (Go: "missing unit in duration")
    if (whole > kMax / mult) return std::nullopt;
    const uint64_t fraction_ns =
        static_cast<uint64_t>(static_cast<double>(frac) * (static_cast<double>(mult) / static_cast<double>(scale)));
    if (whole * mult > kMax - fraction_ns) return std::nullopt;
    const uint64_t part = whole * mult + fraction_ns;
    if (part > kMax - total) return std::nullopt;
    total += part;
  }
  return total;
}

namespace {

// One open object or array while parsing, to name a duplicate key's place.
struct Frame {
  bool is_array = false;
  std::string key;       // object: the member being parsed
  long index = -1;       // array: the element being parsed
  std::set<std::string> seen;
};

std::string path_of(const std::vector<Frame>& stack) {
  std::string out;
  for (size_t d = 1; d < stack.size(); ++d) {  // stack[0] is the root's parent: empty
    const Frame& parent = stack[d - 1];
    if (parent.is_array) out += "[" + std::to_string(parent.index) + "]";
    else out += (out.empty() ? "" : ".") + parent.key;
  }
  return out;
}

}  // namespace

json parse_json_strict(std::string_view text) {
  std::vector<Frame> stack(1);  // a sentinel parent of the root value
  auto enter_value = [&] {
    if (stack.back().is_array) ++stack.back().index;
  };
  json::parser_callback_t cb = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        enter_value();
        Frame f;
        f.is_array = event == json::parse_event_t::array_start;
        stack.push_back(std::move(f));
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (stack.size() > 1) stack.pop_back();
        break;
      case json::parse_event_t::key: {
        Frame& top = stack.back();
        top.key = parsed.get<std::string>();
        if (!top.seen.insert(top.key).second) {
          std::string where = path_of(stack);
          throw DecodeError(where.empty() ? top.key : where + "." + top.key, "duplicate key '" + echo(top.key) + "'");
        }
        break;
      }
      case json::parse_event_t::value:
        enter_value();
        break;
    }
    return true;
  };
  return json::parse(text, cb);
}

std::string format_duration(uint64_t ns) {
  if (ns % 3'600'000'000'000ull == 0 && ns) return std::to_string(ns / 3'600'000'000'000ull) + "h";
  if (ns % 60'000'000'000ull == 0 && ns) return std::to_string(ns / 60'000'000'000ull) + "m";
  if (ns % 1'000'000'000 == 0 && ns) return std::to_string(ns / 1'000'000'000) + "s";
  if (ns % 1'000'000 == 0 && ns) return std::to_string(ns / 1'000'000) + "ms";
  if (ns % 1'000 == 0 && ns) return std::to_string(ns / 1'000) + "us";
  return std::to_string(ns) + "ns";
}

}  // namespace c2c::codec

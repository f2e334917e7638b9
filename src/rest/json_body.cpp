#include "rest/json_body.hpp"

#include <iconv.h>
#include <json/json.h>

#include <cerrno>
#include <memory>
#include <mutex>

namespace c2c::rest {
namespace {

// jsoncpp's formatted errors read "* Line 1, Column 26\n  Duplicate key: 'priority'\n"; the first
// error (it may collect more while recovering) as one line: "line 1, column 26: Duplicate key: ...".
std::string first_error(const std::string& errs) {
  std::string where, what;
  size_t star = errs.find("* ");
  if (star != std::string::npos) {
    size_t nl = errs.find('\n', star);
    where = errs.substr(star + 2, nl == std::string::npos ? std::string::npos : nl - star - 2);
    if (nl != std::string::npos) {
      size_t start = errs.find_first_not_of(' ', nl + 1);
      size_t end = errs.find('\n', start);
      if (start != std::string::npos) what = errs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
  }
  if (where.empty()) return errs;
  where[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(where[0])));
  if (auto c = where.find(", Column"); c != std::string::npos) where.replace(c, 8, ", column");
  return where + ": " + what;
}

// The key jsoncpp names in "Duplicate key: 'priority'", or "".
std::string duplicate_key(const std::string& message) {
  const std::string tag = "Duplicate key: '";
  size_t b = message.find(tag);
  if (b == std::string::npos) return "";
  b += tag.size();
  size_t e = message.rfind('\'');
  return e == std::string::npos || e < b ? "" : message.substr(b, e - b);
}

std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

// jsoncpp's tree -> nlohmann's, checking every decoded string and key. Recursion is bounded by
// the depth jsoncpp already enforced.
std::optional<JsonError> convert(const Json::Value& v, const std::string& path, json& out) {
  auto check = [&](const std::string& s, const std::string& field) -> std::optional<JsonError> {
    if (auto at = first_invalid_utf8(s))
      return JsonError{JsonRefusal::Utf8, field,
                       "a \\u escape decodes to a string that is not UTF-8 (byte " + std::to_string(*at) +
                           " of the decoded string; a lone surrogate?)"};
    return std::nullopt;
  };
  switch (v.type()) {
    case Json::nullValue: out = nullptr; return std::nullopt;
    case Json::intValue: out = static_cast<int64_t>(v.asInt64()); return std::nullopt;
    case Json::uintValue: out = static_cast<uint64_t>(v.asUInt64()); return std::nullopt;
    case Json::realValue: out = v.asDouble(); return std::nullopt;
    case Json::booleanValue: out = v.asBool(); return std::nullopt;
    case Json::stringValue: {
      const char* b = nullptr;
      const char* e = nullptr;
      v.getString(&b, &e);
      std::string s(b, static_cast<size_t>(e - b));
      if (auto err = check(s, path)) return err;
      out = std::move(s);
      return std::nullopt;
    }
    case Json::arrayValue: {
      out = json::array();
      for (Json::ArrayIndex i = 0; i < v.size(); ++i) {
        json item;
        if (auto err = convert(v[i], path + "[" + std::to_string(i) + "]", item)) return err;
        out.push_back(std::move(item));
      }
      return std::nullopt;
    }
    case Json::objectValue: {
      out = json::object();
      for (auto it = v.begin(); it != v.end(); ++it) {
        const char* e = nullptr;
        const char* b = it.memberName(&e);
        std::string key(b, static_cast<size_t>(e - b));
        if (auto err = check(key, join(path, "<key>"))) return err;
        json item;
        if (auto err2 = convert(*it, join(path, key), item)) return err2;
        out[key] = std::move(item);
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

const char* refusal_reason(JsonRefusal r) {
  switch (r) {
    case JsonRefusal::Empty: return "body-empty";
    case JsonRefusal::Syntax: return "body-syntax";
    case JsonRefusal::Depth: return "body-depth";
    case JsonRefusal::DuplicateKey: return "body-duplicate-key";
    case JsonRefusal::Utf8: return "body-utf8";
  }
  return "body";
}

std::optional<size_t> first_invalid_utf8(std::string_view s) {
  // glibc's UTF-8 decoder (iconv_open is not cheap: one descriptor per thread, reset per call).
  thread_local iconv_t cd = ::iconv_open("UTF-32LE", "UTF-8");
  if (cd == reinterpret_cast<iconv_t>(-1)) return 0;  // cannot check: refuse rather than pass unchecked
  ::iconv(cd, nullptr, nullptr, nullptr, nullptr);
  char* in = const_cast<char*>(s.data());
  size_t in_left = s.size();
  char out[4096];
  while (in_left > 0) {
    char* o = out;
    size_t o_left = sizeof(out);
    if (::iconv(cd, &in, &in_left, &o, &o_left) == static_cast<size_t>(-1) && errno != E2BIG)
      return static_cast<size_t>(in - s.data());  // EILSEQ (invalid) or EINVAL (truncated at the end)
  }
  return std::nullopt;
}

std::variant<json, JsonError> parse_json_body(std::string_view body, size_t max_depth) {
  if (body.empty()) return JsonError{JsonRefusal::Empty, "", "the body is empty (expected a JSON object)"};
  if (auto at = first_invalid_utf8(body))
    return JsonError{JsonRefusal::Utf8, "",
                     "not UTF-8: byte " + std::to_string(*at) + " of the body does not begin a valid UTF-8 sequence"};
  Json::CharReaderBuilder builder;
  Json::CharReaderBuilder::strictMode(&builder.settings_);  // rejectDupKeys, failIfExtra, strictRoot, no comments
  builder["stackLimit"] = static_cast<Json::UInt64>(max_depth);
  std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
  Json::Value root;
  std::string errs;
  bool parsed = false;
  try {
    parsed = reader->parse(body.data(), body.data() + body.size(), &root, &errs);
  } catch (const Json::Exception&) {
    // jsoncpp throws (only) when the nesting exceeds stackLimit, before recursing any deeper.
    return JsonError{JsonRefusal::Depth, "",
                     "nested deeper than " + std::to_string(max_depth) + " levels (the limit, --max-json-depth)"};
  }
  if (!parsed) {
    std::string msg = first_error(errs);
    std::string key = duplicate_key(msg);
    // A key spelled with escapes may decode to bytes that are not UTF-8 ("\udc00"): it cannot be
    // echoed into a JSON reply, so it is described instead.
    if (!key.empty() && first_invalid_utf8(key)) {
      return JsonError{JsonRefusal::DuplicateKey, "<key>",
                       "a key that is not UTF-8 (a lone surrogate escape) given twice in one object (" +
                           msg.substr(0, msg.find(": ")) + ")"};
    }
    if (!key.empty())
      return JsonError{JsonRefusal::DuplicateKey, key,
                       "given twice in one object (" + msg.substr(0, msg.find(": ")) + "); a key may appear once"};
    return JsonError{JsonRefusal::Syntax, "", "not JSON: " + msg};
  }
  json out;
  if (auto err = convert(root, "", out)) return *err;
  return out;
}

}  // namespace c2c::rest

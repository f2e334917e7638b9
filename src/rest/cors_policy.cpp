#include "rest/cors_policy.hpp"

#include <regex>

namespace c2c::rest {
namespace {

constexpr const char* kMethods = "GET, POST, PUT, DELETE";
constexpr const char* kHeaders = "Authorization, Content-Type";

}  // namespace

bool CorsPolicy::allows(const std::string& origin) const {
  for (const auto& o : origins)
    if (o == origin) return true;
  return false;
}

std::optional<std::string> cors_origin_problem(const std::string& origin) {
  // A DNS name or an IPv4 address, or a bracketed IPv6 address; a port 1..65535.
  static const std::regex shape(R"((https?)://([a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?|\[[0-9a-f:.]+\])(:([0-9]{1,5}))?)");
  std::smatch m;
  if (!std::regex_match(origin, m, shape))
    return "--cors-origin '" + origin + "' is not an origin: expected http[s]://host[:port] in lower case, "
           "without a path (e.g. http://gui.example:5173); '*' is not accepted, list each origin";
  if (m[5].matched) {
    long port = std::stol(m[5].str());
    if (port < 1 || port > 65535) return "--cors-origin '" + origin + "': port " + m[5].str() + " is not 1..65535";
  }
  return std::nullopt;
}

HeaderList cors_headers(const CorsPolicy& p, const std::string* origin) {
  if (!origin || !p.allows(*origin)) return {};
  return {{"Access-Control-Allow-Origin", *origin}, {"Vary", "Origin"}};
}

Preflight cors_preflight(const CorsPolicy& p, const std::string* origin, const std::string* request_method) {
  if (!origin) return {fail(403, "not a CORS preflight: no Origin header", "Origin"), {}};
  if (!p.allows(*origin)) return {fail(403, "origin " + *origin + " is not allowed (--cors-origin)", "Origin"), {{"Vary", "Origin"}}};
  if (!request_method) return {fail(403, "not a CORS preflight: no Access-Control-Request-Method header",
                                    "Access-Control-Request-Method"), {{"Vary", "Origin"}}};
  const std::string& m = *request_method;
  if (m != "GET" && m != "POST" && m != "PUT" && m != "DELETE")
    return {fail(403, "method " + m + " is not allowed", "Access-Control-Request-Method"), {{"Vary", "Origin"}}};
  Reply r;
  r.status = 204;
  return {r,
          {{"Access-Control-Allow-Origin", *origin},
           {"Vary", "Origin"},
           {"Access-Control-Allow-Methods", kMethods},
           {"Access-Control-Allow-Headers", kHeaders},
           {"Access-Control-Max-Age", "600"}}};
}

}  // namespace c2c::rest

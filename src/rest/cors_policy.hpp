// CORS as an explicit allow-list (--cors-origin, off by default; issue 47): pure, no I/O.
//
// A browser page from another origin (the original GUI served by its own web server) may call the
// API only when its origin is listed. Every API call carries an Authorization header, so the
// browser first sends a preflight (OPTIONS with Origin and Access-Control-Request-Method): it is
// answered 204 with the allow headers only for a listed origin, 403 otherwise, and with no list
// the gateway answers no preflight at all (as before: 404). Bearer tokens are not cookies, so no
// Access-Control-Allow-Credentials: a page of an unlisted origin cannot read any reply, and a
// listed one still needs a token.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rest/envelope.hpp"

namespace c2c::rest {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct CorsPolicy {
  std::vector<std::string> origins;  // exact "scheme://host[:port]", as browsers send Origin
  bool enabled() const { return !origins.empty(); }
  bool allows(const std::string& origin) const;
};

// Why `origin` cannot be an entry of the list (naming the flag), or nullopt: "http" or "https",
// a host, an optional port, nothing else ("*", a path, a trailing slash, upper case are refused:
// browsers send the origin lower-cased without a path, so such an entry would never match).
std::optional<std::string> cors_origin_problem(const std::string& origin);

// The headers for a reply to a request with this Origin header (nullptr: none): empty unless the
// origin is listed.
HeaderList cors_headers(const CorsPolicy& p, const std::string* origin);

struct Preflight {
  Reply reply;  // 204 (no body) or 403
  HeaderList headers;
};
// The answer to OPTIONS with these Origin and Access-Control-Request-Method headers.
Preflight cors_preflight(const CorsPolicy& p, const std::string* origin, const std::string* request_method);

}  // namespace c2c::rest

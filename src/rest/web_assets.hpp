// The web GUI (src/rest/web/*), embedded at build time by embed_web.cmake so the gateway serves
// exactly the files it was built with (no install step, no CDN).
#pragma once

#include <string_view>

namespace c2c::rest {

struct WebAsset {
  std::string_view path;          // "/index.html"
  std::string_view content_type;  // "text/html; charset=utf-8"
  std::string_view content;
  std::string_view etag;          // a hash of the content, quoted
};

// nullptr when there is no such file.
const WebAsset* find_web_asset(std::string_view path);

}  // namespace c2c::rest

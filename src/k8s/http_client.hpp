// A small libcurl client for the API server: plain GETs (lists, objects), line-streamed GETs
// (watches) and PATCHes (the policy CRDs' status, the preview acknowledgement).
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "k8s/kube_config.hpp"

namespace c2c::k8s {

struct HttpResult {
  long status = 0;          // HTTP status, 0 when no response
  std::string body;         // for get()
  std::string error;        // transport error (curl), empty when the transfer completed
  bool ok() const { return error.empty() && status == 200; }
};

class HttpClient {
 public:
  explicit HttpClient(KubeConfig cfg);
  // GET server+path; gives up after timeout_s, or early when *stop becomes true.
  HttpResult get(const std::string& path, long timeout_s = 60, const std::atomic<bool>* stop = nullptr) const;
  // GET server+path and call on_line for every complete line of the body as it arrives.
  // Returns when the server ends the response, the connection breaks (error set), on_line
  // returns false, or `stop` becomes true.
  HttpResult stream(const std::string& path, const std::function<bool(const std::string&)>& on_line,
                    const std::atomic<bool>& stop, long timeout_s) const;
  // PATCH server+path with `body` as `content_type` (e.g. application/merge-patch+json); the
  // response body is in the result whatever the status (a 409's Status names the conflict).
  HttpResult patch(const std::string& path, const std::string& body, const std::string& content_type,
                   long timeout_s = 30) const;

 private:
  KubeConfig cfg_;
};

std::string url_encode(const std::string& s);

// Why a request failed, for logs and errors: the transport error, else "HTTP <status>" followed by
// the API server's own message (its Status object), which names what is missing, e.g. `User
// "system:serviceaccount:claim2core:claim2cored" cannot patch resource "nodeschedulingpolicies/status"
// ... at the cluster scope` for a 403, so a missing RBAC verb is plain from the log line.
std::string describe_failure(const HttpResult& r);

}  // namespace c2c::k8s

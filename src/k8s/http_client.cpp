#include "k8s/http_client.hpp"

#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

namespace c2c::k8s {

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct StreamState {
  const std::function<bool(const std::string&)>* on_line = nullptr;
  const std::atomic<bool>* stop = nullptr;
  std::string buffer;
  std::string* body = nullptr;
  bool aborted = false;
  // A request with a body (PATCH); empty method: GET.
  std::string method, content_type;
  const std::string* request_body = nullptr;
};

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<StreamState*>(user);
  size_t len = size * n;
  if (st->body) {
    st->body->append(data, len);
    return len;
  }
  st->buffer.append(data, len);
  size_t start = 0, nl;
  while ((nl = st->buffer.find('\n', start)) != std::string::npos) {
    std::string line = st->buffer.substr(start, nl - start);
    start = nl + 1;
    if (!line.empty() && !(*st->on_line)(line)) {
      st->aborted = true;
      return 0;  // makes curl stop with CURLE_WRITE_ERROR
    }
  }
  st->buffer.erase(0, start);
  return len;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* st = static_cast<StreamState*>(user);
  return st->stop && st->stop->load() ? 1 : 0;
}

std::string read_token(const KubeConfig& c) {
  if (!c.token.empty() || c.token_file.empty()) return c.token;
  std::ifstream in(c.token_file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string t = ss.str();
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  return t;
}

HttpResult perform(const KubeConfig& cfg, const std::string& path, StreamState& st, long timeout_s) {
  global_init();
  HttpResult r;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> h(curl_easy_init(), curl_easy_cleanup);
  if (!h) {
    r.error = "curl_easy_init failed";
    return r;
  }
  CURL* c = h.get();
  std::string url = cfg.server + path;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &st);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &st);
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  struct curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Accept: application/json");
  std::string content_type = "Content-Type: " + st.content_type;
  if (!st.method.empty()) {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, st.method.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, st.request_body->data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(st.request_body->size()));
    headers = curl_slist_append(headers, content_type.c_str());
  }
  std::string token = read_token(cfg);
  std::string auth = "Authorization: Bearer " + token;
  if (!token.empty()) headers = curl_slist_append(headers, auth.c_str());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> hguard(headers, curl_slist_free_all);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_blob ca{}, cert{}, key{};
  if (!cfg.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, cfg.ca_file.c_str());
  if (!cfg.ca_data.empty()) {
    ca = {const_cast<char*>(cfg.ca_data.data()), cfg.ca_data.size(), CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
  }
  if (!cfg.client_cert_file.empty()) curl_easy_setopt(c, CURLOPT_SSLCERT, cfg.client_cert_file.c_str());
  if (!cfg.client_cert_data.empty()) {
    cert = {const_cast<char*>(cfg.client_cert_data.data()), cfg.client_cert_data.size(), CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cert);
  }
  if (!cfg.client_key_file.empty()) curl_easy_setopt(c, CURLOPT_SSLKEY, cfg.client_key_file.c_str());
  if (!cfg.client_key_data.empty()) {
    key = {const_cast<char*>(cfg.client_key_data.data()), cfg.client_key_data.size(), CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &key);
  }
  if (cfg.insecure_skip_tls_verify) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && st.aborted)) {
    r.error = std::string(curl_easy_strerror(rc)) + " (" + url + ")";
  }
  if (!st.body && !st.buffer.empty() && rc == CURLE_OK) (*st.on_line)(st.buffer);  // last line without newline
  return r;
}

}  // namespace

HttpClient::HttpClient(KubeConfig cfg) : cfg_(std::move(cfg)) { global_init(); }

HttpResult HttpClient::get(const std::string& path, long timeout_s, const std::atomic<bool>* stop) const {
  std::string body;
  StreamState st;
  st.body = &body;
  st.stop = stop;
  HttpResult r = perform(cfg_, path, st, timeout_s);
  r.body = std::move(body);
  return r;
}

HttpResult HttpClient::stream(const std::string& path, const std::function<bool(const std::string&)>& on_line,
                              const std::atomic<bool>& stop, long timeout_s) const {
  StreamState st;
  st.on_line = &on_line;
  st.stop = &stop;
  return perform(cfg_, path, st, timeout_s);
}

HttpResult HttpClient::patch(const std::string& path, const std::string& body, const std::string& content_type,
                             long timeout_s) const {
  std::string response;
  StreamState st;
  st.body = &response;
  st.method = "PATCH";
  st.content_type = content_type;
  st.request_body = &body;
  HttpResult r = perform(cfg_, path, st, timeout_s);
  r.body = std::move(response);
  return r;
}

std::string describe_failure(const HttpResult& r) {
  if (!r.error.empty()) return r.error;
  nlohmann::json st = nlohmann::json::parse(r.body, nullptr, false);
  std::string msg =
      st.is_object() && st.contains("message") && st["message"].is_string() ? st["message"].get<std::string>() : "";
  return "HTTP " + std::to_string(r.status) + (msg.empty() ? "" : ": " + msg);
}

std::string url_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : s) {
    if (isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out.push_back(static_cast<char>(ch));
    } else {
      out.push_back('%');
      out.push_back(hex[ch >> 4]);
      out.push_back(hex[ch & 15]);
    }
  }
  return out;
}

}  // namespace c2c::k8s

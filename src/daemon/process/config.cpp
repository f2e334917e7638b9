#include "daemon/process/config.hpp"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "host/events_ringbuf.hpp"
#include "codec/bounded_yaml.hpp"
#include "codec/json_reader.hpp"

namespace c2c::daemon {
namespace {

struct ConfigError {
  FieldError e;
};

[[noreturn]] void fail(const std::string& field, const std::string& message) { throw ConfigError{{field, message}}; }

std::string scalar(const YAML::Node& n, const std::string& field) {
  if (!n.IsScalar()) fail(field, "must be a scalar");
  return n.Scalar();
}

uint64_t number(const YAML::Node& n, const std::string& field, uint64_t min, uint64_t max) {
  std::string s = scalar(n, field);
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) fail(field, "must be a non-negative integer");
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
  if (errno != 0 || v < min || v > max)
    fail(field, "must be between " + std::to_string(min) + " and " + std::to_string(max));
  return v;
}

bool boolean(const YAML::Node& n, const std::string& field) {
  std::string s = scalar(n, field);
  if (s == "true") return true;
  if (s == "false") return false;
  fail(field, "must be true or false");
}

uint64_t duration(const YAML::Node& n, const std::string& field, uint64_t min_ns, uint64_t max_ns) {
  auto ns = codec::parse_duration_ns(scalar(n, field));
  if (!ns) fail(field, "must be a duration such as \"30s\" or \"500ms\"");
  if (*ns < min_ns || *ns > max_ns)
    fail(field, "must be between " + codec::format_duration(min_ns) + " and " + codec::format_duration(max_ns));
  return *ns;
}

std::string path_field(const YAML::Node& n, const std::string& field) {
  std::string s = scalar(n, field);
  if (!s.empty() && s.front() != '/') fail(field, "must be an absolute path");
  if (s.size() > 4096) fail(field, "longer than 4096 bytes");
  return s;
}

void only(const YAML::Node& map, const std::string& prefix, std::initializer_list<const char*> known) {
  for (const auto& kv : map) {
    std::string k = kv.first.IsScalar() ? kv.first.Scalar() : "?";
    bool ok = false;
    for (const char* n : known) ok = ok || k == n;
    if (!ok) fail(prefix + k, "unknown field");
  }
}

void parse_into(const YAML::Node& root, DaemonConfig& c) {
  if (!root || root.IsNull()) return;
  if (!root.IsMap()) fail("(root)", "must be a mapping of fields");
  only(root, "", {"node_name", "socket", "role_socket", "allowed_uids", "state_dir", "pin_root", "policy_map_max_entries",
                  "task_discovery", "task_event_buffer", "task_event_poll_interval", "realtime_priority", "rescan_interval", "readback_interval", "watch_queue", "max_message_bytes",
                  "max_connections", "role_limits", "role_peer_identity", "log_level", "scheduler", "scheduler_object", "bpf_dir", "tcp", "metrics", "node"});
  if (auto n = root["node_name"]) {
    c.node_name = scalar(n, "node_name");
    if (c.node_name.size() > 253) fail("node_name", "longer than 253 characters");
  }
  if (auto n = root["node"]) {
    if (!n.IsMap()) fail("node", "must be a mapping (node.labels, node.default_max_boost)");
    only(n, "node.", {"labels", "default_max_boost"});
    if (auto b = n["default_max_boost"])
      c.default_max_boost_ns = duration(b, "node.default_max_boost", kMinBoostNs, kMaxBoostNs);
    if (auto l = n["labels"]) {
      if (!l.IsMap()) fail("node.labels", "must be a mapping of label keys to values");
      c.node_labels.clear();
      for (const auto& kv : l) {
        const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "?";
        c.node_labels[key] = scalar(kv.second, "node.labels[" + key + "]");
      }
      // The syntax the API server enforces on a Node's labels, so a selector means the same here.
      if (auto e = validate_labels("node.labels", c.node_labels)) fail(e->field, e->message);
    }
  }
  if (auto n = root["socket"]) {
    c.socket = path_field(n, "socket");
    if (c.socket.empty()) fail("socket", "must not be empty");
    if (c.socket.size() >= 108) fail("socket", "longer than a Unix socket path may be (107 bytes)");
  }
  if (auto n = root["role_socket"]) {
    c.role_socket = scalar(n, "role_socket");
    if (c.role_socket != "off" && (c.role_socket.empty() || c.role_socket.front() != '/'))
      fail("role_socket", "must be an absolute path or off");
    if (c.role_socket.size() >= 108) fail("role_socket", "longer than a Unix socket path may be (107 bytes)");
  }
  if (auto n = root["role_peer_identity"]) {
    auto mode = parse_peer_identity_mode(scalar(n, "role_peer_identity"));
    if (!mode) fail("role_peer_identity", "must be auto or start-time");
    c.role_peer_identity = *mode;
  }
  if (auto n = root["role_limits"]) {
    if (!n.IsMap()) fail("role_limits", "must be a mapping (idle_timeout, connections, connections_per_uid, ...)");
    only(n, "role_limits.", {"idle_timeout", "connections", "connections_per_uid", "privileged_reserve",
                             "in_flight_per_connection", "in_flight_per_uid", "rate_per_uid", "burst_per_uid"});
    RoleLimits& l = c.role_limits;
    if (auto v = n["idle_timeout"]) l.idle_timeout_ns = duration(v, "role_limits.idle_timeout", 100'000'000, 3'600'000'000'000ull);
    auto count = [&](const char* key, uint32_t* out, uint64_t min, uint64_t max) {
      if (auto v = n[key]) *out = static_cast<uint32_t>(number(v, std::string("role_limits.") + key, min, max));
    };
    count("connections", &l.connections, 1, 65536);
    count("connections_per_uid", &l.connections_per_uid, 1, 65536);
    count("privileged_reserve", &l.privileged_reserve, 0, 65535);
    count("in_flight_per_connection", &l.in_flight_per_connection, 1, 1024);
    count("in_flight_per_uid", &l.in_flight_per_uid, 1, 65536);
    count("rate_per_uid", &l.rate_per_uid, 1, 1'000'000);
    count("burst_per_uid", &l.burst_per_uid, 1, 1'000'000);
  }
  if (auto n = root["allowed_uids"]) {
    if (!n.IsSequence()) fail("allowed_uids", "must be a list of user ids");
    c.allowed_uids.clear();
    for (size_t i = 0; i < n.size(); ++i)
      c.allowed_uids.push_back(static_cast<uint32_t>(number(n[i], "allowed_uids[" + std::to_string(i) + "]", 0, 4294967294u)));
  }
  if (auto n = root["state_dir"]) c.state_dir = path_field(n, "state_dir");
  if (auto n = root["pin_root"]) c.pin_root = path_field(n, "pin_root");
  if (auto n = root["policy_map_max_entries"])
    c.policy_map_max_entries = static_cast<uint32_t>(number(n, "policy_map_max_entries", 1, 1u << 22));
  if (auto n = root["task_discovery"]) {
    std::string s = scalar(n, "task_discovery");
    if (s == "events")
      c.task_discovery = TaskDiscovery::Events;
    else if (s == "scan")
      c.task_discovery = TaskDiscovery::Scan;
    else if (s == "off")
      c.task_discovery = TaskDiscovery::Off;
    else
      fail("task_discovery", "must be events, scan or off");
  }
  if (auto n = root["task_event_buffer"]) {
    const uint64_t bytes = number(n, "task_event_buffer", 0, host::kMaxEventsRingbufBytes);
    if (bytes != 0)
      if (auto p = host::events_ringbuf_bytes_problem(bytes)) fail("task_event_buffer", *p + " (0: derived from pid_max)");
    c.task_event_buffer_bytes = static_cast<uint32_t>(bytes);
  }
  if (auto n = root["task_event_poll_interval"])
    c.task_event_poll_interval_ns = duration(n, "task_event_poll_interval", 0, 10'000'000);
  if (auto n = root["realtime_priority"])
    c.realtime_priority = static_cast<uint32_t>(number(n, "realtime_priority", 0, 99));
  if (auto n = root["rescan_interval"]) c.rescan_interval_ns = duration(n, "rescan_interval", 100'000'000, 3'600'000'000'000ull);
  if (auto n = root["readback_interval"])
    c.readback_interval_ns = duration(n, "readback_interval", 100'000'000, 3'600'000'000'000ull);
  if (auto n = root["watch_queue"]) c.watch_queue = static_cast<uint32_t>(number(n, "watch_queue", 1, 1u << 20));
  if (auto n = root["max_message_bytes"])
    c.max_message_bytes = static_cast<uint32_t>(number(n, "max_message_bytes", 1024, 64u << 20));
  if (auto n = root["max_connections"])
    c.max_connections = static_cast<uint32_t>(number(n, "max_connections", 1, 1u << 20));
  if (auto n = root["log_level"]) c.log_level = scalar(n, "log_level");
  if (auto n = root["scheduler"]) {
    std::string s = scalar(n, "scheduler");
    if (s == "auto")
      c.scheduler = SchedulerMode::Auto;
    else if (s == "off")
      c.scheduler = SchedulerMode::Off;
    else
      fail("scheduler", "must be auto (load it where sched_ext exists) or off");
  }
  if (auto n = root["scheduler_object"]) c.scheduler_object = path_field(n, "scheduler_object");
  if (auto n = root["bpf_dir"]) c.bpf_dir = path_field(n, "bpf_dir");
  if (auto t = root["tcp"]) {
    if (!t.IsMap()) fail("tcp", "must be a mapping (address, cert, key, client_ca)");
    only(t, "tcp.", {"address", "cert", "key", "client_ca"});
    if (auto n = t["address"]) c.tcp.address = scalar(n, "tcp.address");
    if (auto n = t["cert"]) c.tcp.cert = path_field(n, "tcp.cert");
    if (auto n = t["key"]) c.tcp.key = path_field(n, "tcp.key");
    if (auto n = t["client_ca"]) c.tcp.client_ca = path_field(n, "tcp.client_ca");
  }
  if (auto m = root["metrics"]) {
    if (!m.IsMap()) fail("metrics", "must be a mapping (address, allow_non_loopback)");
    only(m, "metrics.", {"address", "allow_non_loopback"});
    if (auto n = m["address"]) c.metrics_address = scalar(n, "metrics.address");
    if (auto n = m["allow_non_loopback"]) c.metrics_allow_non_loopback = boolean(n, "metrics.allow_non_loopback");
  }
}

// "host:port" with a port in 1..65535; the host part is returned.
std::optional<std::string> host_of(const std::string& addr) {
  auto colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= addr.size()) return std::nullopt;
  std::string port = addr.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5) return std::nullopt;
  int p = std::stoi(port);
  if (p < 1 || p > 65535) return std::nullopt;
  return addr.substr(0, colon);
}

}  // namespace

const char* to_string(TaskDiscovery d) {
  switch (d) {
    case TaskDiscovery::Events: return "events";
    case TaskDiscovery::Scan: return "scan";
    case TaskDiscovery::Off: return "off";
  }
  return "?";
}

std::optional<FieldError> validate(const DaemonConfig& c) {
  static const std::set<std::string> kLevels = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  if (!kLevels.count(c.log_level))
    return FieldError{"log_level", "must be one of trace, debug, info, warn, error, critical, off"};
  if (c.socket.empty() || c.socket.front() != '/') return FieldError{"socket", "must be an absolute path"};
  if (c.socket.size() >= 108) return FieldError{"socket", "longer than a Unix socket path may be (107 bytes)"};
  if (c.state_dir.empty() || c.state_dir.front() != '/') return FieldError{"state_dir", "must be an absolute path"};
  if (c.pin_root.rfind("/sys/fs/bpf/", 0) != 0 || c.pin_root.size() <= 12)
    return FieldError{"pin_root", "must be a directory under /sys/fs/bpf/"};
  const RoleLimits& rl = c.role_limits;
  if (rl.privileged_reserve >= rl.connections)
    return FieldError{"role_limits.privileged_reserve",
                      "must be less than role_limits.connections (" + std::to_string(rl.connections) +
                          "), or no unprivileged process could register a role"};
  if (rl.connections_per_uid > rl.connections - rl.privileged_reserve)
    return FieldError{"role_limits.connections_per_uid",
                      "must be at most role_limits.connections - role_limits.privileged_reserve (" +
                          std::to_string(rl.connections - rl.privileged_reserve) + ")"};
  if (!c.tcp.address.empty()) {
    if (!host_of(c.tcp.address)) return FieldError{"tcp.address", "must be host:port"};
    if (c.tcp.cert.empty()) return FieldError{"tcp.cert", "TCP needs mutual TLS: set the server certificate"};
    if (c.tcp.key.empty()) return FieldError{"tcp.key", "TCP needs mutual TLS: set the server key"};
    if (c.tcp.client_ca.empty())
      return FieldError{"tcp.client_ca", "TCP needs mutual TLS: set the CA that signs client certificates"};
  }
  if (!c.metrics_address.empty()) {
    auto host = host_of(c.metrics_address);
    if (!host) return FieldError{"metrics.address", "must be host:port (e.g. 127.0.0.1:9464)"};
    bool loopback = *host == "127.0.0.1" || *host == "localhost" || *host == "[::1]";
    if (!loopback && !c.metrics_allow_non_loopback)
      return FieldError{"metrics.address", "only 127.0.0.1 unless metrics.allow_non_loopback is true"};
  }
  return std::nullopt;
}

bool parse_config(const std::string& yaml, DaemonConfig* out, FieldError* err) {
  DaemonConfig c = *out;
  // yaml-cpp 0.7 can hang on malformed input (fuzz/findings): the text must first parse in the
  // bounded child (which also refuses duplicate keys); only then is it parsed here.
  try {
    codec::parse_documents_bounded(yaml);
  } catch (const codec::YamlError& e) {
    *err = FieldError{"(yaml)", std::string("not valid YAML: ") + e.what()};
    return false;
  }
  try {
    YAML::Node root = YAML::Load(yaml);
    parse_into(root, c);
  } catch (const ConfigError& e) {
    *err = e.e;
    return false;
  } catch (const YAML::Exception& e) {
    *err = FieldError{"(yaml)", std::string("not valid YAML: ") + e.what()};
    return false;
  }
  if (auto e = validate(c)) {
    *err = *e;
    return false;
  }
  *out = std::move(c);
  return true;
}

bool load_config(const std::string& path, bool must_exist, DaemonConfig* out, FieldError* err) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT && !must_exist) return true;
    *err = FieldError{path, std::string("cannot read the config file: ") + std::strerror(errno)};
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  FieldError e;
  if (!parse_config(ss.str(), out, &e)) {
    *err = FieldError{e.field, path + ": " + e.message};
    return false;
  }
  return true;
}

std::vector<std::string> restart_only_changes(const DaemonConfig& a, const DaemonConfig& b) {
  std::vector<std::string> out;
  if (a.node_name != b.node_name) out.emplace_back("node_name");
  if (a.default_max_boost_ns != b.default_max_boost_ns) out.emplace_back("node.default_max_boost");
  if (a.socket != b.socket) out.emplace_back("socket");
  if (a.role_socket != b.role_socket) out.emplace_back("role_socket");
  if (!(a.role_limits == b.role_limits)) out.emplace_back("role_limits");
  if (a.role_peer_identity != b.role_peer_identity) out.emplace_back("role_peer_identity");
  if (a.state_dir != b.state_dir) out.emplace_back("state_dir");
  if (a.pin_root != b.pin_root) out.emplace_back("pin_root");
  if (a.policy_map_max_entries != b.policy_map_max_entries) out.emplace_back("policy_map_max_entries");
  if (a.task_discovery != b.task_discovery) out.emplace_back("task_discovery");
  if (a.task_event_buffer_bytes != b.task_event_buffer_bytes) out.emplace_back("task_event_buffer");
  if (a.realtime_priority != b.realtime_priority) out.emplace_back("realtime_priority");
  if (a.max_message_bytes != b.max_message_bytes) out.emplace_back("max_message_bytes");
  if (a.max_connections != b.max_connections) out.emplace_back("max_connections");
  if (a.scheduler != b.scheduler || a.scheduler_object != b.scheduler_object) out.emplace_back("scheduler");
  if (a.bpf_dir != b.bpf_dir) out.emplace_back("bpf_dir");
  if (!(a.tcp.address == b.tcp.address && a.tcp.cert == b.tcp.cert && a.tcp.key == b.tcp.key &&
        a.tcp.client_ca == b.tcp.client_ca))
    out.emplace_back("tcp");
  if (a.metrics_address != b.metrics_address || a.metrics_allow_non_loopback != b.metrics_allow_non_loopback)
    out.emplace_back("metrics");
  return out;
}

std::string role_socket_path(const DaemonConfig& cfg) {
  if (!cfg.role_socket.empty()) return cfg.role_socket == "off" ? "" : cfg.role_socket;
  // A private gRPC socket (tests, the demo) gets a private role socket beside it.
  if (cfg.socket != DaemonConfig{}.socket) return cfg.socket + ".roles";
  return kDefaultRoleSocket;
}

}  // namespace c2c::daemon

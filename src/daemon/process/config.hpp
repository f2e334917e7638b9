// claim2cored's configuration: a YAML file (every field validated; an error names the field),
// overridden by command-line flags (main.cpp). spec/daemon.md lists every field.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/core.hpp"
#include "daemon/role_socket/role_limits.hpp"
#include "daemon/role_socket/peer_identity.hpp"

namespace c2c::daemon {

enum class TaskDiscovery : uint8_t {
  Events,  // BPF tracepoints -> ring buffer, plus periodic rescans (the default)
  Scan,    // periodic rescans only (BPF iterator, else procfs)
  Off,     // no task discovery (policies and previews only; tests that need a quiet state)
};
const char* to_string(TaskDiscovery d);

inline constexpr const char* kDefaultRoleSocket = "/run/claim2core-roles/roles.sock";

enum class SchedulerMode : uint8_t { Auto, Off };

struct TcpConfig {
  std::string address;    // host:port; empty: no TCP listener
  std::string cert;       // server certificate (PEM file)
  std::string key;        // its private key
  std::string client_ca;  // CA that signs client certificates (mutual TLS is mandatory)
  bool operator==(const TcpConfig&) const = default;
};

struct DaemonConfig {
  std::string node_name;                         // empty: the host name
  // node.labels: this node's labels where no Kubernetes Node object feeds them (issue #14); the
  // Node object's labels replace them when the observer sends some. kubernetes.io/hostname is
  // always present (node_labels.hpp). A SIGHUP reload applies a change.
  std::map<std::string, std::string> node_labels;
  // NodeInfo.defaultMaxBoost: the boost lease of node policies' entries (renewed at half-life);
  // unset: the core's default, 30 s (restart).
  std::optional<uint64_t> default_max_boost_ns;
  std::string socket = "/run/claim2core/claim2cored.sock";
  std::vector<uint32_t> allowed_uids = {0};      // plus the daemon's own uid, always
  // The role socket (RegisterTaskRole for workloads, role_socket.hpp): empty: the default, or
  // "<socket>.roles" beside a non-default socket; "off": none.
  std::string role_socket;
  // role_limits.*: what one uid may hold and ask of the role socket (role_limits.hpp; restart).
  RoleLimits role_limits;
  // role_peer_identity: how a role connection is bound to its process (peer_identity.hpp):
  // "auto" (SO_PEERPIDFD, else the start time) or "start-time" (the older kernels' path, forced;
  // restart).
  PeerIdentityMode role_peer_identity = PeerIdentityMode::Auto;
  std::string state_dir = "/var/lib/claim2core";
  std::string pin_root = "/sys/fs/bpf/claim2core";
  uint32_t policy_map_max_entries = 131072;
  TaskDiscovery task_discovery = TaskDiscovery::Events;
  // Bytes of the task-event ring buffer (a power of two, 1 MiB..1 GiB); 0: derived from pid_max
  // (host::default_events_ringbuf_bytes).
  uint32_t task_event_buffer_bytes = 0;
  // In a storm of task events (eight reads in a row with records, each after the loop waited less
  // than this interval) the ring buffer is read on the loop's clock every this often with the
  // producers' wake-ups off, instead of a wake-up per fork and exit; 0: always woken
  // (task_event_pacing.hpp).
  uint64_t task_event_poll_interval_ns = 1'000'000;
  // SCHED_FIFO priority (1..99) of the daemon's loop and gRPC threads, set at start before they
  // exist (realtime_priority.hpp); 0: the default time-sharing class. On a node whose CPUs are busy a
  // time-shared daemon waits out the running task's slice at each wake-up (ms), and its reaction
  // to a new thread or an RPC with it.
  uint32_t realtime_priority = 0;
  uint64_t rescan_interval_ns = 30'000'000'000ull;
  uint64_t readback_interval_ns = 5'000'000'000ull;
  uint32_t watch_queue = 256;                    // events a watcher may lag before it is dropped
  uint32_t max_message_bytes = 4u << 20;
  // Unix-socket connections served at once (also at most half the file-descriptor limit, so
  // the durable writes and the BPF objects always find descriptors). More wait in the backlog.
  uint32_t max_connections = 1000;
  std::string log_level = "info";
  SchedulerMode scheduler = SchedulerMode::Auto;
  std::string scheduler_object;                  // empty: claim2core.bpf.o from the BPF dirs
  std::string bpf_dir;                           // empty: <exe>/../lib/claim2core (host/bpf_object_path)
  TcpConfig tcp;
  std::string metrics_address;                   // empty: no metrics endpoint
  bool metrics_allow_non_loopback = false;
  // Command line only (--recover-generation), never in the file: a one-time operator decision
  // to start although the generation file is missing next to state.json (generation_guard.hpp).
  bool recover_generation = false;
  bool operator==(const DaemonConfig&) const = default;
};

// Parses YAML text over the defaults. false with *err naming the field ("tcp.client_ca").
bool parse_config(const std::string& yaml, DaemonConfig* out, FieldError* err);
// Reads a file; a missing file is the defaults unless `must_exist`.
bool load_config(const std::string& path, bool must_exist, DaemonConfig* out, FieldError* err);
// Cross-field checks (also after command-line overrides).
std::optional<FieldError> validate(const DaemonConfig& c);

// Fields a SIGHUP reload can change in a running daemon; the others are reported as needing a
// restart (their names are returned).
std::vector<std::string> restart_only_changes(const DaemonConfig& running, const DaemonConfig& next);

// The role socket for a configuration: cfg.role_socket when set ("off": "", none), else
// "<socket>.roles" beside a non-default socket, else kDefaultRoleSocket.
std::string role_socket_path(const DaemonConfig& cfg);

}  // namespace c2c::daemon

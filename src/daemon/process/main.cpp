// claim2cored: the node daemon (spec/daemon.md).
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>
#include <malloc.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>

#include "c2c_version.hpp"
#include "daemon/process/config.hpp"
#include "host/bpf_object_path.hpp"
#include "daemon/loop/engine.hpp"
#include "daemon/process/exclusive.hpp"
#include "daemon/process/logging.hpp"
#include "daemon/process/metrics.hpp"
#include "daemon/loop/realtime_priority.hpp"
#include "daemon/process/sd_notify.hpp"
#include "daemon/service/grpc_listeners.hpp"
#include "daemon/process/signals.hpp"

namespace {

constexpr const char* kDefaultConfig = "/etc/claim2core/claim2cored.yaml";

struct Flags {
  std::string config;
  std::string role_socket;
  std::string node_name, socket, state_dir, pin_root, log_level, task_discovery, metrics_address, tcp_address;
  std::vector<uint32_t> allowed_uids;
  bool check_config = false;
  bool recover_generation = false;
};

// The soft RLIMIT_NOFILE up to the hard one: every connection, BPF object and durable write
// needs a descriptor, and the default soft limit (1024) is far below what the kernel allows.
void raise_nofile_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  rlim_t before = rl.rlim_cur;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
      spdlog::warn("RLIMIT_NOFILE: cannot raise the soft limit {} to {}: {}", before, rl.rlim_max, std::strerror(errno));
      return;
    }
  }
  spdlog::info("file descriptors: soft limit {} (was {}), hard limit {}", rl.rlim_cur, before, rl.rlim_max);
}

// Config file, then flags on top; false with a message naming the field.
bool build_config(const Flags& f, c2c::daemon::DaemonConfig* out, std::string* err) {
  using namespace c2c::daemon;
  DaemonConfig c;
  c2c::FieldError fe;
  bool explicit_file = !f.config.empty();
  if (!load_config(explicit_file ? f.config : kDefaultConfig, explicit_file, &c, &fe)) {
    *err = "config " + fe.field + ": " + fe.message;
    return false;
  }
  if (!f.node_name.empty()) c.node_name = f.node_name;
  if (!f.socket.empty()) c.socket = f.socket;
  if (!f.role_socket.empty()) c.role_socket = f.role_socket;
  if (!f.state_dir.empty()) c.state_dir = f.state_dir;
  if (!f.pin_root.empty()) c.pin_root = f.pin_root;
  if (!f.log_level.empty()) c.log_level = f.log_level;
  if (!f.metrics_address.empty()) c.metrics_address = f.metrics_address;
  if (!f.tcp_address.empty()) c.tcp.address = f.tcp_address;
  if (!f.allowed_uids.empty()) c.allowed_uids = f.allowed_uids;
  c.recover_generation = f.recover_generation;
  if (!f.task_discovery.empty()) {
    std::string yaml = "task_discovery: " + f.task_discovery;
    if (!parse_config(yaml, &c, &fe)) {
      *err = "--task-discovery: " + fe.message;
      return false;
    }
  }
  if (auto e = validate(c)) {
    *err = "config " + e->field + ": " + e->message;
    return false;
  }
  *out = c;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace c2c::daemon;
  // glibc raises its mmap and trim thresholds as large blocks are freed (up to 32 and 64 MiB), and
  // from then on a thread's arena keeps what a burst freed at its top, which malloc_trim does not
  // reach in arenas other than the main one (the engine's loop is such a thread): 28 MB of a
  // 100k-task burst stayed resident after the tasks exited (issue #13). Fixed thresholds: a block
  // of 1 MiB or more is mapped on its own and unmapped when freed, an arena's top is trimmed once
  // 4 MiB of it are free.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 4 << 20);
  CLI::App app{"claim2cored: keeps the pinned per-task policy maps in step with policies, claims and tasks"};
  Flags f;
  app.set_version_flag("--version", std::string("claim2cored ") + c2c::kVersionString);
  app.add_option("-c,--config", f.config, std::string("YAML config file (default ") + kDefaultConfig + " if present)");
  app.add_option("--node-name", f.node_name, "node name (default: the host name)");
  app.add_option("--socket", f.socket, "Unix socket path");
  app.add_option("--role-socket", f.role_socket,
                 "the role socket (RegisterTaskRole for any process, own threads only; 'off': none)");
  app.add_option("--state-dir", f.state_dir, "durable state directory");
  app.add_option("--pin-root", f.pin_root, "bpffs directory of the pinned maps");
  app.add_option("--allowed-uid", f.allowed_uids, "uid allowed on the socket (repeatable; own uid always)");
  app.add_option("--log-level", f.log_level, "trace|debug|info|warn|error|critical|off");
  app.add_option("--task-discovery", f.task_discovery, "events|scan|off");
  app.add_option("--metrics-address", f.metrics_address, "Prometheus endpoint, e.g. 127.0.0.1:9464");
  app.add_option("--tcp-address", f.tcp_address, "TCP listener (needs tcp.cert/key/client_ca in the config)");
  app.add_flag("--check-config", f.check_config, "validate the configuration and exit");
  app.add_flag("--recover-generation", f.recover_generation,
               "start although the generation file is missing next to state.json: above the highest generation "
               "recorded in the pinned map and state.json (spec/daemon.md)");
  CLI11_PARSE(app, argc, argv);

  DaemonConfig cfg;
  std::string err;
  if (!build_config(f, &cfg, &err)) {
    std::fprintf(stderr, "claim2cored: %s\n", err.c_str());
    return 2;
  }
  if (f.check_config) {
    std::printf("configuration ok\n");
    return 0;
  }
  block_daemon_signals();
  setup_logging(cfg.log_level);
  raise_nofile_limit();
  // Before anything is touched: a second daemon on the same state, pins or socket stops here.
  NodeLocks locks;
  if (!acquire_node_locks(cfg, &locks, &err)) {
    spdlog::critical("startup refused: {}", err);
    return 1;
  }
  c2c::host::set_bpf_object_dir_override(cfg.bpf_dir);  // before anything opens a BPF object
  // The metrics endpoint's threads start first and stay time-shared: a scrape needs no haste.
  Metrics metrics;
  if (!cfg.metrics_address.empty()) {
    if (auto e = metrics.expose(cfg.metrics_address); !e.empty()) {
      spdlog::critical("{}", e);
      return 1;
    }
    spdlog::info("metrics on http://{}/metrics", cfg.metrics_address);
  }
  // Before the engine's loop and gRPC's threads: each inherits the priority.
  const RealtimeOutcome realtime = enter_realtime(cfg.realtime_priority);
  if (!realtime.refused.empty())
    spdlog::error("{}; the daemon runs time-shared (on a busy node its reactions then wait for CPU)", realtime.refused);
  else if (realtime.priority != 0)
    spdlog::info("the daemon's loop and gRPC threads run SCHED_FIFO {} (realtime_priority)", realtime.priority);
  metrics.set_realtime_priority(realtime.priority);
  std::unique_ptr<Engine> engine;
  {
    // Startup is bulk work (a rescan of every task, the whole map, the first reconcile): time-shared.
    TimeSharedScope startup(realtime.priority);
    engine = Engine::create(cfg, metrics, &err);
  }
  if (!engine) {
    spdlog::critical("startup failed: {}", err);
    return 1;
  }
  engine->start(realtime.priority);
  auto server = Server::start(cfg, *engine, metrics, &err);
  if (!server) {
    spdlog::critical("server: {}", err);
    engine->drain();
    return 1;
  }
  spdlog::info("ready");
  notify_ready("serving on " + cfg.socket);
  // The watchdog's proof of life: a no-op command that the engine's loop runs and answers.
  auto watchdog = std::make_unique<Watchdog>(watchdog_period(), [&engine](std::chrono::milliseconds timeout) {
    auto done = std::make_shared<std::promise<void>>();
    auto answered = done->get_future();
    if (!engine->submit(Command{[](Engine&) { return false; }, [done](Engine&) { done->set_value(); }})) return false;
    return answered.wait_for(timeout) == std::future_status::ready;
  });

  while (true) {
    Signal s = wait_signal();
    if (s == Signal::Terminate) break;
    DaemonConfig next;
    if (!build_config(f, &next, &err)) {
      spdlog::error("SIGHUP: new configuration refused ({}); the running one is kept", err);
      continue;
    }
    for (const auto& field : restart_only_changes(cfg, next))
      spdlog::warn("SIGHUP: {} changed; it takes effect at the next restart", field);
    set_log_level(next.log_level);
    server->set_allowed_uids(next.allowed_uids);
    engine->reload(next);
    auto keep = cfg;
    cfg = next;
    // Restart-only fields stay as running.
    cfg.node_name = keep.node_name;
    cfg.socket = keep.socket;
    cfg.role_socket = keep.role_socket;
    cfg.role_limits = keep.role_limits;
    cfg.role_peer_identity = keep.role_peer_identity;
    cfg.state_dir = keep.state_dir;
    cfg.pin_root = keep.pin_root;
    cfg.tcp = keep.tcp;
    cfg.metrics_address = keep.metrics_address;
    cfg.task_discovery = keep.task_discovery;
    cfg.task_event_buffer_bytes = keep.task_event_buffer_bytes;
    cfg.realtime_priority = keep.realtime_priority;
    cfg.max_message_bytes = keep.max_message_bytes;
    cfg.max_connections = keep.max_connections;
    cfg.recover_generation = keep.recover_generation;
    cfg.policy_map_max_entries = keep.policy_map_max_entries;
    cfg.scheduler = keep.scheduler;
    cfg.scheduler_object = keep.scheduler_object;
    cfg.bpf_dir = keep.bpf_dir;
    cfg.metrics_allow_non_loopback = keep.metrics_allow_non_loopback;
    spdlog::info("SIGHUP: configuration reloaded (log_level {}, rescan {} ms, readback {} ms)", cfg.log_level,
                 cfg.rescan_interval_ns / 1'000'000, cfg.readback_interval_ns / 1'000'000);
  }
  spdlog::info("SIGTERM: draining (no new connections, queued commands finish, state is persisted)");
  notify_stopping("draining");
  watchdog.reset();  // before the engine goes: its probe submits to the engine
  server->stop_accepting();
  engine->drain();
  server->shutdown();
  engine.reset();
  spdlog::info("stopped");
  return 0;
}

// The engine: the one thread that owns the Core, the Applier, the PinnedMaps, the task event
// stream and the generation lease (spec/daemon.md, "The loop"). gRPC handlers hand it Commands;
// it batches them: apply every command to the core, make the batch durable once if a durable
// input changed (group commit: lease.cover, state file; on failure the batch is rolled back),
// plan -> lease.cover -> apply to the pinned map -> BpfSynced, update intents, then finish every
// command (replies carry the post-apply state) and publish ChangeEvents.
#pragma once

#include <atomic>
#include <cstdint>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/node_api.hpp"
#include "claim2core_abi.hpp"
#include "core/core.hpp"
#include "daemon/controller/activity_windows.hpp"
#include "daemon/controller/decision_log.hpp"
#include "daemon/controller/signal_windows.hpp"
#include "daemon/loop/command_queue.hpp"
#include "daemon/process/config.hpp"
#include "daemon/durable/durable_state.hpp"
#include "daemon/loop/host_feed.hpp"
#include "daemon/node_state/intents.hpp"
#include "daemon/process/metrics.hpp"
#include "daemon/node_state/node_labels.hpp"
#include "daemon/node_state/group_commit.hpp"
#include "daemon/node_state/node_state.hpp"
#include "daemon/reconciler/full_pass_pacing.hpp"
#include "daemon/reconciler/reconciler.hpp"
#include "daemon/loop/task_event_pacing.hpp"
#include "daemon/loop/heap_trim.hpp"
#include "daemon/node_state/task_listing.hpp"
#include "daemon/durable/state_log.hpp"
#include "daemon/service/watchers.hpp"
#include "mirror/generation_store.hpp"
#include "mirror/kernel_map.hpp"
#include "mirror/pinned_maps.hpp"

namespace c2c::sched {
class Scheduler;
}

namespace c2c::daemon {

struct SchedulerStatus {
  bool enforcing = false;
  std::string state;        // /sys/kernel/sched_ext/state, "" without sched_ext
  std::string exit_reason;
  std::string message;      // one plain sentence
};

class Engine {
 public:
  // Startup (INV-7, INV-4): lease -> DaemonRestart{floor} -> durable state -> node info -> pinned
  // maps -> task snapshot -> BpfObserved -> SyncComplete -> plan/apply. nullptr with *err.
  static std::unique_ptr<Engine> create(const DaemonConfig& cfg, Metrics& metrics, std::string* err);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // The loop thread; realtime_priority: the SCHED_FIFO priority the daemon's threads run at (0:
  // time-shared), for the loop's budget per wake-up (realtime_budget.hpp).
  void start(uint32_t realtime_priority = 0);
  bool submit(Command c);       // false while draining (the caller answers UNAVAILABLE)
  // SIGTERM: refuse new commands, finish the queued ones, persist, stop the loop (maps stay).
  void drain();
  // SIGHUP with a validated config: only the runtime fields take effect (log level, intervals,
  // allowed uids are the server's).
  void reload(const DaemonConfig& cfg);
  std::shared_ptr<Watcher> watch() { return watchers_.subscribe(cfg_.watch_queue); }

  // ---- the typed node API (api/node_api.hpp; engine_api.cpp), for Command lambdas: loop
  // thread only. Mutations run in a command's apply phase; the rest (and the replies) in its
  // finish phase, after the batch is durable and the map written. ----
  // require_named_node: a node policy whose nodeNames leave this node out is refused unchanged
  // (w.ignored, w.node_not_selected set), the REST gateway's 404 in the same call.
  node::Write upsert_policy(const AnyPolicy& p, bool require_named_node = false);
  node::Write delete_policy(PolicyKind kind, const std::string& name, int64_t generation);
  // All or nothing (Core::apply_all): the claims (as given: each allocated or updated) and the
  // pods (resolved from the host where empty) of one request.
  node::Write bind_claims(const std::vector<Claim>& claims, const std::vector<Pod>& pods);
  // Deallocates the claim and forgets the pods no live claim reserves.
  node::Write unbind_claim(const std::string& uid, int64_t generation);
  node::PreviewReply preview(const AnyPolicy& p, bool acknowledge);
  // RegisterTaskRole: checks the caller (task_roles.hpp), observes the thread if the core does
  // not know it yet, applies TaskRoleSet and persists the role (durable until the task is gone).
  node::RoleReply register_role(const node::RoleRequest& q);
  node::PolicyReply policy_reply(PolicyKind kind, const std::string& name) const;
  std::vector<node::Intent> list_intents(const std::string& policy, std::optional<PolicyKind> kind) const;
  std::optional<Lineage> explain(uint32_t tid) const;
  // For explain: the scheduler's per-task counters of the thread (its pinned c2c_task_cnt), if a
  // scheduler counted it: boost inheritance's "boost inherited from tid N" (issue 43 item 3).
  std::optional<c2c_task_counters> task_counters(uint32_t tid) const;
  node::NodeStatus status();
  // Tasks that pass the filter, sorted by tid, with the policy each gets (task_listing.hpp).
  std::vector<node::TaskRow> list_tasks(const TaskFilter& f) const;
  std::vector<AnyPolicy> list_policies() const;
  // Node policy name -> why this node is not selected (Core::node_not_selected); selected ones absent.
  std::map<std::string, std::string> node_policies_not_selected() const;
  node::Bindings list_bindings() const;
  // The controllers' decisions kept (decision_log.hpp) and every controller's level now.
  node::Decisions list_decisions(const std::string& policy, uint32_t tid, uint32_t limit) const;
  // For explain: the controller of the policy whose entry the thread has, if it has one and acts
  // on that thread, and its last `limit` decisions about the thread.
  std::optional<node::Decisions> explain_controller(uint32_t tid, uint32_t limit) const;
  // For explain: the role proposed for the thread from the latest activity window, if any.
  std::optional<node::Proposal> explain_proposal(uint32_t tid) const;
  // The Kubernetes Node object's labels (the observer's SetNodeLabels): they replace node.labels
  // of the config from now on (node_labels.hpp); the core re-derives what the change flips.
  // Not durable: the feed sends them again whenever it reconnects.
  node::Write set_node_labels(const NodeLabelMap& labels);
  // What nodeSelectors match against now.
  NodeLabelMap node_labels() const;
  // This batch could not be made durable ("" when fine): its generation could not be covered
  // or the state file not written. The batch was rolled back (core, durable state, intents;
  // the map was not touched): mutating replies refuse with it.
  const std::string& persist_error() const { return persist_error_; }
  // The node generation clients may be told: never above the durable ceiling, so no restart
  // can reuse a generation anybody saw (INV-4), even while the lease cannot be extended.
  uint64_t reported_generation() const;
  // Fills a pod's cgroup (by UID) and cpuset envelope from the host when they are empty;
  // appends a warning when nothing is found.
  Pod resolve_pod(Pod p, std::vector<std::string>* warnings) const;
  SchedulerStatus scheduler_status() const;
  int64_t now_unix_ms() const;
  Metrics& metrics() { return metrics_; }

 private:
  // Applies one input event; records the change for Watch. Invalid/Ignored leave state alone.
  ApplyResult apply(const Event& e);
  BatchResult apply_all(const std::vector<Event>& events);
  void note_applied(const Event& e, const ApplyResult& r);
  // A change of the durable state: applied to it now, written with the batch's log record (one
  // record and one fdatasync per turn: group commit, node_state/group_commit.hpp) before any reply
  // of the batch is sent.
  void record(StateChange c);
  std::optional<AnyPolicy> stored_policy(PolicyKind kind, const std::string& name) const;
  Engine(const DaemonConfig& cfg, Metrics& metrics);
  bool startup(std::string* err);
  // startup()'s steps, in its order (false with *err: the start is refused).
  bool open_lease(std::string* err);
  bool read_node(std::string* err);
  bool open_maps(std::string* err);
  bool restore_durable(std::string* err, size_t* restored);
  size_t observe_tasks();
  bool settle_start(std::string* err);
  void run(uint32_t realtime_priority);
  void turn(bool commands_ready, bool events_ready, bool timer);
  // turn()'s steps, in its order.
  void run_commands(std::vector<Command>& cmds);
  void rescan_if_due(uint64_t now);
  void apply_task_events(uint64_t now);
  // The controllers' windows that ended: measured (signal_windows.hpp) and given to the core.
  void controller_windows();
  // An activity window when one is due: the roles proposed (activity_windows.hpp).
  void activity_windows();
  void renew_leases();
  void end_turn(uint64_t now);
  void reconcile() { reconciler_->reconcile(); }
  void refresh_scheduler_metrics();
  // The intents from the facts (node_state/intent_settling.hpp: the code the node-state model
  // test runs too); report: the apply's, for its failed ops.
  void settle_intents(const mirror::ApplyReport* report, const std::string& owed_error);
  void refresh_intents();
  void rescan();
  // Rewrites the snapshot (state.json: everything, intents included) and empties the log. ""
  // or the error; also kept in persist_error_.
  void persist();
  // The batch made durable (group commit); refused: rolled back, its changes unpublished.
  void commit_batch();
  void cover_generation();
  void keep_lease_ahead();
  void arm_timer();
  uint64_t boottime_ns() const;
  void advance_time(bool renew);
  void publish_changes();
  void start_scheduler();

  DaemonConfig cfg_;
  Metrics& metrics_;
  NodeState node_;  // core, durable state, intents, their facts, the generation lease
  GroupCommit commit_{node_, metrics_};  // the command batches made durable (node_state/group_commit.hpp)
  CommandQueue queue_;
  WatcherSet watchers_;
  std::unique_ptr<mirror::PinnedMaps> maps_;
  std::unique_ptr<mirror::KernelPolicyMap> map_io_;
  // Writes the map from node_ and reads it back (reconciler/reconciler.hpp); after map_io_.
  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<HostFeed> feed_;
  std::unique_ptr<sched::Scheduler> scheduler_;
  std::string scheduler_message_;

  int epfd_ = -1, timerfd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::string persist_error_;
  std::string last_ahead_error_;  // keep_lease_ahead's last error, logged once
  uint64_t next_ahead_try_ns_ = 0;  // keep_lease_ahead after a failure: not before this
  uint64_t next_renewal_ns_ = UINT64_MAX;
  // A renewal wave under way: due leases left by a bounded renewal step (advance_time), and what
  // its batches did so far, for its debug line.
  struct RenewalWave {
    uint64_t started_ns = 0, cpu_started_ns = 0;
    size_t leases = 0, turns = 0;
  };
  std::optional<RenewalWave> renewal_wave_;
  FullPassSchedule rescan_pass_;  // the periodic rescan (full_pass_pacing.hpp)
  uint64_t armed_ns_ = 0;  // what the timerfd is set to (re-armed only when it changes)
  // When the ring buffer is read: at its wake-up, or on the clock in a storm (task_event_pacing.hpp).
  TaskEventPacing task_event_pacing_{cfg_.task_event_poll_interval_ns};
  uint64_t waited_ns_ = 0;  // how long the loop's last epoll_wait slept
  void read_task_events(uint64_t now);
  void watch_task_events(bool on);
  HeapTrim heap_trim_;   // freed heap back to the kernel after mass exits and large writes (heap_trim.hpp)
  bool turn_changed_ = false;  // an input changed the core in this turn
  // The node's labels changed (SetNodeLabels, SIGHUP's node.labels): which node policies select
  // this node may have changed, so the intents are refreshed in the same turn (refresh_intents).
  bool labels_changed_ = false;
  // Pins found deleted or replaced under the running daemon and pinned again (at a full read-back).
  uint32_t pins_restored_ = 0;
  std::string pin_repair_;  // the last repair (or the error that prevented it), for Status
  void restore_pins();

  // The controllers (issue 46): their windows from /proc's schedstat, the decisions kept, and
  // the window being applied (its measured values go with the decision it makes).
  SignalWindows signal_windows_{proc_schedstat_reader("/proc"), proc_pressure_reader("/proc")};
  DecisionLog decisions_;
  // Roles from activity (issue 46 item 4): the wakeup-edges program's windows, the latest
  // proposals per policy; where the program cannot load, said once and no proposals.
  ActivityWindows activity_{bpf_activity_source()};
  bool activity_unavailable_logged_ = false;
  const WindowSignals* applying_window_ = nullptr;
  bool schedstat_zero_logged_ = false;
  void record_decisions(const ApplyResult& r);

  // Changes of this turn, published after the apply.
  struct Change {
    std::string kind;
    std::vector<uint32_t> tids;
    std::vector<std::pair<std::string, std::string>> log_fields;  // event_log.hpp: the event's names
  };
  std::vector<Change> changes_;
  std::deque<host::TaskEvent> pending_host_;  // polled task events not applied yet (oldest first)
  std::vector<Intent> intents_before_;     // the intents as last published (Watch, the log)
  uint64_t published_intents_version_ = 0;  // node_.intents.version() when intents_before_ was taken
  uint64_t metered_intents_version_ = ~0ull;  // node_.intents.version() the intent gauges show
};

}  // namespace c2c::daemon

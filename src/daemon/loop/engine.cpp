#include "daemon/loop/engine.hpp"

#include <spdlog/spdlog.h>
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>

#include "daemon/durable/batch_reservation.hpp"
#include "daemon/process/event_log.hpp"
#include "daemon/node_state/intent_reasons.hpp"
#include "daemon/reconciler/lease_hold.hpp"
#include "daemon/loop/realtime_budget.hpp"
#include "host/durable_file.hpp"
#include "daemon/durable/durable_load.hpp"
#include "daemon/durable/generation_guard.hpp"
#include "host/bpf_object_path.hpp"
#include "host/events_ringbuf.hpp"
#include "host/topology.hpp"
#include "claim2core_abi.hpp"
#include "sched/enforcing.hpp"
#include "sched/loader.hpp"
#include "sched/stats.hpp"

namespace c2c::daemon {

namespace {

// CPU time the loop may spend per wake-up at SCHED_FIFO (realtime_budget.hpp): a task event or a
// command takes microseconds to a few hundred; a turn past this is bulk work and goes on
// time-shared.
constexpr uint64_t kRealtimeBudgetNs = 2'000'000;

uint64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The calling thread's CPU time (the loop's, for what a full pass cost it).
uint64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

constexpr uint64_t kTagCommands = 1, kTagTaskEvents = 2, kTagTimer = 3;
constexpr size_t kMaxPendingHostEvents = 65536;
// Boost leases renewed per turn (TimeAdvance.max_renewals): leases granted together (a policy's
// 100k entries) reach half-life together, and renewing and writing them all was one turn (590 ms
// at 100k on a quiet host) that a new thread's record waited behind (issue #13). A turn renews at
// most this many (~1.2 ms with their writes: 2.3 us a lease); the rest follow kSliceGapNs after
// each batch's write, a turn at a time.
constexpr uint32_t kRenewalsPerTurn = 512;
// Generations the durable lease ceiling is kept ahead of G at the end of a turn (keep_lease_ahead):
// the headroom of four commands (kLeaseHeadroomPerCommand).
constexpr uint64_t kLeaseAheadGenerations = 4 * kLeaseHeadroomPerCommand;
// The change records a turn keeps room for; a larger burst's room is given back after it.
constexpr size_t kKeptChanges = 1024;

bool is_host_or_internal(const Event& e) {
  return std::holds_alternative<TaskSeen>(e) || std::holds_alternative<TaskRenamed>(e) ||
         std::holds_alternative<TaskExited>(e) || std::holds_alternative<TimeAdvance>(e) ||
         std::holds_alternative<BpfObserved>(e) || std::holds_alternative<BpfSynced>(e) ||
         std::holds_alternative<ControllerWindow>(e);  // one a window per controller: a change only when it moves a level
}

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

}  // namespace

Engine::Engine(const DaemonConfig& cfg, Metrics& metrics) : cfg_(cfg), metrics_(metrics) {}

Engine::~Engine() {
  if (thread_.joinable()) {
    drain();
  }
  watchers_.close_all();
  if (scheduler_) scheduler_->detach();
  if (epfd_ >= 0) close(epfd_);
  if (timerfd_ >= 0) close(timerfd_);
}

std::unique_ptr<Engine> Engine::create(const DaemonConfig& cfg, Metrics& metrics, std::string* err) {
  std::unique_ptr<Engine> e(new Engine(cfg, metrics));
  if (!e->startup(err)) return nullptr;
  return e;
}

uint64_t Engine::boottime_ns() const { return clock_ns(CLOCK_BOOTTIME); }

int64_t Engine::now_unix_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Engine::note_applied(const Event& e, const ApplyResult& r) {
  node_.facts.touched(r.changed_tids);
  if (!r.decisions.empty()) record_decisions(r);
  // A registered role leaves with its task (the core dropped it already): the durable copy goes
  // too, in memory, and with the next snapshot on disk; a restart drops any left in the log.
  if (std::holds_alternative<TaskExited>(e) || std::holds_alternative<TaskSeen>(e)) {
    const uint32_t tid = std::holds_alternative<TaskExited>(e) ? std::get<TaskExited>(e).key.tid
                                                                 : std::get<TaskSeen>(e).task.key.tid;
    if (const TaskRoleSet* role = node_.durable.role(tid); role && node_.core.task_key(tid) != role->key) node_.durable.delete_role(tid);
  }
  if (std::holds_alternative<TaskExited>(e) && r.status == ApplyResult::Status::Applied) heap_trim_.changed(boottime_ns());
  if (r.status == ApplyResult::Status::Applied && (!r.changed_tids.empty() || !is_host_or_internal(e))) {
    changes_.push_back(Change{event_kind(e), r.changed_tids, event_fields(e)});
    if (!std::holds_alternative<TimeAdvance>(e)) turn_changed_ = true;
  }
  if (std::holds_alternative<NodeLabels>(e) && r.status == ApplyResult::Status::Applied) labels_changed_ = true;
  if (r.status == ApplyResult::Status::Invalid && is_host_or_internal(e))
    spdlog::debug("{} refused by the core: {}: {}", event_kind(e), r.field, r.message);
}

ApplyResult Engine::apply(const Event& e) {
  commit_.before_change();
  ApplyResult r = node_.core.apply(e);
  note_applied(e, r);
  return r;
}

BatchResult Engine::apply_all(const std::vector<Event>& events) {
  commit_.before_change();
  BatchResult b = node_.core.apply_all(events);
  for (size_t i = 0; i < b.results.size() && i < events.size(); ++i) note_applied(events[i], b.results[i]);
  return b;
}

bool Engine::startup(std::string* err) {
  node_.node_name = cfg_.node_name.empty() ? hostname() : cfg_.node_name;
  size_t restored = 0;
  if (!open_lease(err) || !read_node(err) || !open_maps(err) || !restore_durable(err, &restored)) return false;
  const size_t tasks = observe_tasks();
  if (!settle_start(err)) return false;
  spdlog::info(
      "claim2cored on node '{}': generation {} (floor {}), epoch {}, restored {} inputs ({} policies, {} claims, "
      "{} pods), {} tasks, {} map entries at {}; tasks: {}",
      node_.node_name, node_.core.generation(), node_.lease->floor(), node_.core.restart_epoch(), restored, node_.durable.policies.size(),
      node_.durable.claims.size(), node_.durable.pods.size(), tasks, node_.core.actual().size(), cfg_.pin_root,
      feed_->description());
  spdlog::info("scheduler: {}", scheduler_message_);
  return true;
}

// The state directory and the generation lease; the core restarted above the lease's floor and
// the restart's generation covered at once.
bool Engine::open_lease(std::string* err) {
  std::error_code ec;
  std::filesystem::create_directories(cfg_.state_dir, ec);
  if (ec) {
    *err = "state_dir " + cfg_.state_dir + ": " + ec.message();
    return false;
  }
  chmod(cfg_.state_dir.c_str(), 0700);

  // INV-4: everything up to the persisted ceiling may have been written by an earlier process.
  std::string why;
  node_.lease = open_node_lease(cfg_.state_dir, cfg_.pin_root + "/" + C2C_POLICY_MAP_NAME, cfg_.recover_generation, &why);
  if (!node_.lease) {
    *err = "generation file: " + why;
    return false;
  }
  // A floor the core refuses (above the 2^53 generation bound) must stop the start: going on
  // would restart the generations at 1 (INV-4).
  if (auto r = node_.core.apply(DaemonRestart{node_.lease->floor()}); !r.ok()) {
    *err = "generation file: generation " + std::to_string(node_.lease->floor()) + " refused by the core (" + r.field +
           ": " + r.message + ")";
    return false;
  }
  node_.core.apply(TimeAdvance{boottime_ns()});
  // Cover the restart's generation right away: the next restart then starts above it even if
  // this process never writes an entry (INV-4 as clients see node_generation).
  if (auto e = node_.lease->cover(node_.core.generation()); !e.empty()) {
    *err = "generation lease: " + e;
    return false;
  }
  return true;
}

// The node's CPUs and NUMA nodes from sysfs, its labels and default boost bound, into the core.
bool Engine::read_node(std::string* err) {
  host::ParseError perr;
  auto topo = host::read_topology("/sys", &perr);
  if (!topo) {
    *err = "topology: " + perr.to_string();
    return false;
  }
  auto node = host::to_node_info(*topo, node_.node_name);
  node.labels = node_labels();
  if (cfg_.default_max_boost_ns) node.default_max_boost = *cfg_.default_max_boost_ns;
  if (auto r = node_.core.apply(NodeInfoEvent{node}); !r.ok()) {
    *err = "node info refused by the core: " + r.field + ": " + r.message;
    return false;
  }
  return true;
}

// The pinned maps, the reconciler over the policy map, the scheduler, the task event stream.
bool Engine::open_maps(std::string* err) {
  try {
    sched::ensure_pin_dir(cfg_.pin_root);
  } catch (const std::exception& e) {
    *err = std::string("pin_root: ") + e.what();
    return false;
  }
  mirror::PinOptions po;
  po.pin_root = cfg_.pin_root;
  po.policy_max_entries = cfg_.policy_map_max_entries;
  po.events_ringbuf_bytes =
      cfg_.task_event_buffer_bytes != 0 ? cfg_.task_event_buffer_bytes : host::default_events_ringbuf_bytes();
  auto maps = mirror::PinnedMaps::open(po);
  if (!maps) {
    *err = "pinned maps: " + maps.error();
    return false;
  }
  maps_ = std::move(maps.value());
  if (maps_->events_resized_from() != 0)
    spdlog::info("task-event ring buffer {}/" C2C_EVENTS_MAP_NAME " replaced: {} -> {} bytes (task_event_buffer)",
                 cfg_.pin_root, maps_->events_resized_from(), po.events_ringbuf_bytes);
  if (maps_->compare_delete() == nullptr)
    spdlog::warn("deletes compare against a read of the policy map (slower at scale, as safe): {}",
                 maps_->compare_delete_error());
  map_io_ = std::make_unique<mirror::KernelPolicyMap>(maps_->policy_fd(), maps_->policy_max_entries(),
                                                      maps_->compare_delete());
  reconciler_ = std::make_unique<Reconciler>(
      node_, *map_io_, cfg_, metrics_, heap_trim_,
      ReconcilerClock{[this] { return boottime_ns(); }, thread_cpu_ns, [this] { return now_unix_ms(); }},
      FullPassHooks{[this] { restore_pins(); }, [this] { refresh_scheduler_metrics(); }});
  start_scheduler();

  // The event stream is opened before the snapshot, so no task slips between the two.
  feed_ = std::make_unique<HostFeed>(cfg_.task_discovery, maps_->events_fd());
  return true;
}

// The durable state (snapshot and log) into the core: the Node object's labels, then the inputs.
bool Engine::restore_durable(std::string* err, size_t* restored) {
  LoadedState loaded;
  if (!load_durable_state(cfg_.state_dir, &loaded, err)) return false;
  node_.durable = std::move(loaded.state);
  commit_.open(cfg_.state_dir + "/state.json", std::move(loaded.log));
  if (!loaded.dropped.empty()) spdlog::warn("durable state log {}: {}", commit_.log()->path(), loaded.dropped);
  if (loaded.replayed)
    spdlog::info("durable state: {} log records replayed after the snapshot", loaded.replayed);
  // The Node object's labels the feed last sent select node policies from the first turn on, as
  // before the restart; the feed resends them when it reconnects.
  if (node_.durable.node_object_labels) {
    if (auto r = node_.core.apply(NodeLabels{node_labels()}); !r.ok()) {
      node_.durable.node_object_labels.reset();
      spdlog::error("restoring the Node object's labels: refused by the core ({}: {}); the config's apply", r.field,
                    r.message);
    }
  }
  for (auto& e : restore_events(node_.durable)) {
    if (auto* pb = std::get_if<PodBound>(&e)) pb->pod = resolve_pod(pb->pod, nullptr);
    auto r = node_.core.apply(e);
    if (!r.ok())
      spdlog::error("restoring {}: refused by the core ({}: {}); skipped", event_kind(e), r.field, r.message);
    else
      ++*restored;
  }
  return true;
}

// The host's tasks from a snapshot, and the registered roles of the tasks still alive; how many
// tasks.
size_t Engine::observe_tasks() {
  std::vector<Event> tasks;
  feed_->rescan(node_.core, tasks);
  for (const auto& t : tasks) node_.core.apply(t);
  // Registered roles survive a restart only while their task lives (INV-7, INV-2): the
  // (tid, start) must be the task just observed; the others are dropped (persist() below).
  size_t roles_kept = 0;
  for (const auto& role : std::vector<TaskRoleSet>(node_.durable.roles)) {
    if (node_.core.task_key(role.key.tid) == role.key && node_.core.apply(role).status == ApplyResult::Status::Applied) {
      ++roles_kept;
    } else {
      node_.durable.delete_role(role.key.tid);
    }
  }
  if (!node_.durable.roles.empty() || roles_kept) spdlog::info("registered task roles: {} kept after the restart", roles_kept);
  return tasks.size();
}

// The map observed, the intents restored and refreshed, the first reconcile, and the state the
// start ends in made durable.
bool Engine::settle_start(std::string* err) {
  auto actual = reconciler_->read_actual();
  if (!actual) {
    *err = "reading the policy map: " + actual.error();
    return false;
  }
  node_.core.apply(BpfObserved{actual->entries});
  node_.core.apply(SyncComplete{});

  node_.intents.restore(node_.durable.intents);
  refresh_intents();  // a live policy without an intent gets a PENDING one, if it selects this node
  uint64_t now = boottime_ns();
  rescan_pass_.next_ns = now + cfg_.rescan_interval_ns;
  reconciler_->readback_pass().next_ns = now + cfg_.readback_interval_ns;
  reconcile();
  changes_.clear();
  // What the first turn's changes are published against: the state startup ends in (its own
  // settling is not published, as its changes are not).
  intents_before_ = node_.intents.list();
  published_intents_version_ = node_.intents.version();
  reconciler_->set_violations(node_.core.check());
  persist();
  if (!persist_error_.empty()) {
    *err = "writing the durable state: " + persist_error_;
    return false;
  }
  return true;
}

void Engine::start_scheduler() {
  if (!std::filesystem::exists("/sys/kernel/sched_ext")) {
    scheduler_message_ =
        "this kernel has no sched_ext (/sys/kernel/sched_ext is missing): the pinned maps are kept current, "
        "but no scheduler enforces them";
    return;
  }
  if (cfg_.scheduler == SchedulerMode::Off) {
    scheduler_message_ = "sched_ext is available but scheduler: off: no scheduler of ours enforces the maps";
    return;
  }
  std::string obj = cfg_.scheduler_object;
  if (obj.empty()) {
    std::string why;
    auto p = host::find_bpf_object("claim2core", &why);
    if (!p) {
      scheduler_message_ = "sched_ext is available but claim2core.bpf.o was not found (" + why + "): not enforced";
      return;
    }
    obj = p->string();
  }
  try {
    sched::LoaderOptions lo;
    lo.object_path = obj;
    lo.pin_root = cfg_.pin_root;
    scheduler_ = sched::Scheduler::load(lo);
    scheduler_message_ = "the claim2core sched_ext scheduler enforces the pinned maps";
  } catch (const std::exception& e) {
    scheduler_message_ = std::string("sched_ext is available but loading the scheduler failed: ") + e.what();
    spdlog::error("{}", scheduler_message_);
  }
}

SchedulerStatus Engine::scheduler_status() const {
  SchedulerStatus s;
  s.state = sched::scx_state();
  s.message = scheduler_message_;
  if (scheduler_) {
    auto ex = scheduler_->exit_report();
    if (ex) {
      s.exit_reason = sched::exit_kind_name(ex->kind) + ": " + ex->reason + (ex->msg.empty() ? "" : " (" + ex->msg + ")");
      s.message = "the scheduler exited (" + s.exit_reason + "): the maps are kept current but not enforced";
    } else {
      s.enforcing = sched::scheduler_enforcing(s.state, sched::scx_root_ops(), true);
    }
  }
  return s;
}

void Engine::start(uint32_t realtime_priority) {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  timerfd_ = timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
  auto add = [&](int fd, uint64_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
  };
  add(queue_.event_fd(), kTagCommands);
  if (feed_->epoll_fd() >= 0) add(feed_->epoll_fd(), kTagTaskEvents);
  add(timerfd_, kTagTimer);
  thread_ = std::thread([this, realtime_priority] { run(realtime_priority); });
}

bool Engine::submit(Command c) { return queue_.push(std::move(c)); }

void Engine::drain() {
  queue_.close();
  stop_ = true;
  uint64_t one = 1;
  [[maybe_unused]] auto n = write(queue_.event_fd(), &one, sizeof one);
  if (thread_.joinable() && std::this_thread::get_id() != thread_.get_id()) thread_.join();
  watchers_.close_all();
}

void Engine::reload(const DaemonConfig& cfg) {
  submit(Command{[cfg](Engine& e) {
                   e.cfg_.rescan_interval_ns = cfg.rescan_interval_ns;
                   e.cfg_.task_event_poll_interval_ns = cfg.task_event_poll_interval_ns;
                   e.task_event_pacing_.set_interval(cfg.task_event_poll_interval_ns);
                   e.cfg_.readback_interval_ns = cfg.readback_interval_ns;
                   e.cfg_.watch_queue = cfg.watch_queue;
                   e.cfg_.log_level = cfg.log_level;
                   e.cfg_.allowed_uids = cfg.allowed_uids;
                   // node.labels take effect on reload (the Node object's, when fed, still win).
                   e.cfg_.node_labels = cfg.node_labels;
                   e.apply(NodeLabels{e.node_labels()});
                   uint64_t now = e.boottime_ns();
                   e.rescan_pass_.next_ns = std::min(e.rescan_pass_.next_ns, now + cfg.rescan_interval_ns);
                   auto& readback = e.reconciler_->readback_pass();
                   readback.next_ns = std::min(readback.next_ns, now + cfg.readback_interval_ns);
                   return false;
                 },
                 [](Engine&) {}});
}

// One timer for everything the loop waits on by time: the read-back, the rescan, the core's next
// deadline (a boost lease at half-life, renewed by TimeAdvance: spec/state-machine.md, "Boost
// leases"), the first due retry, the heap trim after a mass exit (heap_trim.hpp), an owed look
// at the ring buffer's drop counter (HostFeed::lost_events) and an owed title read (a process's
// renames within 10 ms, HostFeed::refresh_titles: one per such process). O(1) otherwise
// (the core keeps its deadlines); the timerfd is set only when the time changes.
void Engine::arm_timer() {
  uint64_t next = reconciler_->next_wakeup();  // a read-back slice or pass, the first due retry
  if (feed_->mode() != TaskDiscovery::Off) next = std::min(next, rescan_pass_.next_ns);
  // A renewal wave under way keeps its own pace (advance_time); otherwise the lease index's head.
  if (!renewal_wave_) {
    auto deadline = node_.core.next_deadline();
    next_renewal_ns_ = deadline ? static_cast<uint64_t>(*deadline) : UINT64_MAX;
  }
  next = std::min(next, next_renewal_ns_);
  if (auto t = heap_trim_.deadline()) next = std::min(next, *t);
  if (auto t = feed_->drop_check_deadline()) next = std::min(next, *t);
  if (auto t = feed_->title_deadline()) next = std::min(next, *t);
  if (auto t = task_event_pacing_.deadline()) next = std::min(next, *t);
  if (auto t = signal_windows_.deadline()) next = std::min(next, static_cast<uint64_t>(*t));
  if (auto t = activity_.deadline()) next = std::min(next, static_cast<uint64_t>(*t));
  if (next == 0) next = 1;
  if (next == armed_ns_) return;
  armed_ns_ = next;
  itimerspec its{};
  its.it_value.tv_sec = static_cast<time_t>(next / 1'000'000'000ull);
  its.it_value.tv_nsec = static_cast<long>(next % 1'000'000'000ull);
  timerfd_settime(timerfd_, TFD_TIMER_ABSTIME, &its, nullptr);
}

void Engine::run(uint32_t realtime_priority) {
  RealtimeBudget budget(realtime_priority, kRealtimeBudgetNs);
  if (!budget.error().empty())
    spdlog::error("realtime_priority: no budget per wake-up ({}); a long turn holds its CPU at SCHED_FIFO", budget.error());
  std::string budget_error;
  epoll_event evs[8];
  while (true) {
    arm_timer();
    const int timeout = pending_host_.empty() ? -1 : 0;
    const uint64_t demoted = budget.demotions();
    if (auto e = budget.before_wait(timeout != 0); !e.empty() && e != budget_error)
      spdlog::error("realtime_priority: {}", budget_error = e);
    if (budget.demotions() != demoted) metrics_.realtime_demotion();
    const uint64_t wait_from = boottime_ns();
    int n = epoll_wait(epfd_, evs, 8, timeout);
    waited_ns_ = boottime_ns() - wait_from;
    budget.woke(timeout != 0);
    if (n < 0 && errno != EINTR) {
      spdlog::critical("epoll_wait: {}", std::strerror(errno));
      break;
    }
    bool commands = false, events = false, timer = false;
    for (int i = 0; i < n; ++i) {
      if (evs[i].data.u64 == kTagCommands) commands = true;
      if (evs[i].data.u64 == kTagTaskEvents) events = true;
      if (evs[i].data.u64 == kTagTimer) {
        uint64_t expirations = 0;
        [[maybe_unused]] auto r = read(timerfd_, &expirations, sizeof expirations);
        timer = true;
        armed_ns_ = 0;  // expired: the next arm_timer() sets it again
      }
    }
    turn(commands || !pending_host_.empty(), events, timer);
    if (stop_ && queue_.closed() && queue_.size() == 0) {
      turn(true, false, false);  // anything pushed between the last drain and close
      persist();
      spdlog::info("drained: state persisted at generation {}; the pinned maps stay", node_.core.generation());
      break;
    }
  }
}

void Engine::watch_task_events(bool on) {
  epoll_event ev{};
  ev.events = on ? uint32_t{EPOLLIN} : 0u;
  ev.data.u64 = kTagTaskEvents;
  epoll_ctl(epfd_, EPOLL_CTL_MOD, feed_->epoll_fd(), &ev);
}

// Reads the ring buffer and carries out a change of TaskEventPacing's mode: into a storm, the
// producers stop waking the loop and the ring buffer leaves the epoll set (the timer reads it);
// out of one, both come back and the records written meanwhile without a wake-up are read now.
void Engine::read_task_events(uint64_t now) {
  const size_t before = pending_host_.size();
  feed_->poll(pending_host_);
  const TaskEventPacing::Mode was = task_event_pacing_.mode();
  const TaskEventPacing::Mode mode = task_event_pacing_.read(now, pending_host_.size() - before, waited_ns_);
  if (mode == was) return;
  const bool wake = mode == TaskEventPacing::Mode::Wake;
  feed_->set_wakeups(wake);
  watch_task_events(wake);
  if (wake)
    feed_->poll(pending_host_);
  else
    metrics_.task_event_storm();
}

// Time moves every turn that changed something (renew = false: no lease is renewed, except one
// that has run out: the core's rule, INV-8). Leases are renewed in a step of their own once the
// renewal deadline has come (renew = true), at most kRenewalsPerTurn at a time, after the turn's
// replies and its task events' writes; while a wave of due leases remains, the next batch comes
// kSliceGapNs after this one, so task events and commands go between the batches.
void Engine::advance_time(bool renew) {
  const uint64_t now = boottime_ns();
  if (now <= node_.core.now()) return;
  if (renew && !renewal_wave_) renewal_wave_ = RenewalWave{now, thread_cpu_ns()};
  const ApplyResult r = apply(TimeAdvance{now, renew ? kRenewalsPerTurn : 0});
  if (!r.changed_tids.empty()) metrics_.lease_renewals(r.changed_tids.size());
  if (!renew) return;
  renewal_wave_->leases += r.changed_tids.size();
  ++renewal_wave_->turns;
  // The wave goes on while leases are left due (turn() times the next batch once this one is
  // written); else the next renewal is the lease index's head.
  const auto deadline = node_.core.next_deadline();
  if (deadline && *deadline <= now) return;
  next_renewal_ns_ = deadline ? *deadline : UINT64_MAX;
  // (The loop's CPU from the first batch to the last one's lease step: the other work of the
  // turns in between is in it too, and the last batch's write is not.)
  const RenewalWave& w = *renewal_wave_;
  spdlog::debug("lease renewal wave: {} leases in {} turns over {} us ({} us loop CPU)", w.leases, w.turns,
                (now - w.started_ns) / 1000, (thread_cpu_ns() - w.cpu_started_ns) / 1000);
  renewal_wave_.reset();
}

// One wake-up of the loop: the commands, then the host's task events, the read-backs, the writes,
// the lease renewals, then what is published and kept up (the steps below, in this order).
void Engine::turn(bool commands_ready, bool events_ready, bool timer) {
  std::vector<Command> cmds;
  if (commands_ready) cmds = queue_.drain();
  const uint64_t now = boottime_ns();
  // Commands first: their inputs reach the map without waiting behind the host's task events
  // (a busy node forks all the time); the events follow in the same turn.
  if (!cmds.empty()) run_commands(cmds);
  turn_changed_ = false;
  if (events_ready || timer) read_task_events(boottime_ns());
  rescan_if_due(now);
  apply_task_events(now);
  activity_windows();
  controller_windows();
  // A read-back that found drift: the plan must run now to repair it.
  if (reconciler_->read_back_if_due(now, renewal_wave_.has_value())) turn_changed_ = true;
  if (turn_changed_ || reconciler_->retry_due(now) || node_.facts.has_touched()) {
    advance_time(false);
    reconcile();
    cover_generation();
  }
  renew_leases();
  end_turn(now);
}

// The command batch: every command applied, the batch made durable once (group commit), the
// intents and the map following it, then every reply (with the post-apply state).
void Engine::run_commands(std::vector<Command>& cmds) {
  turn_changed_ = false;
  bool durable_changed = false;
  std::vector<size_t> request_bytes;
  for (const auto& c : cmds) request_bytes.push_back(c.request_bytes);
  commit_.begin(request_bytes);
  for (auto& c : cmds) {
    try {
      durable_changed |= c.apply(*this);
    } catch (const std::exception& e) {
      spdlog::error("command failed: {}", e.what());
    }
  }
  commit_.applied();
  // Time moves only when something changed, so that a turn with only reads or refused input
  // leaves the state (and Status.state_digest) exactly as it was. Entries derived just before
  // carry leases from the previous `now`: shorter, never longer (INV-8). Due leases are renewed
  // after the replies (advance_time).
  if (turn_changed_) advance_time(false);
  // Durable first, then the map (spec/daemon.md, "Durable before the map"): a change that cannot be
  // persisted must never be live, so the map only sees a batch that is on disk.
  persist_error_.clear();
  if (durable_changed) commit_batch();
  commit_.end();
  // A policy, claim, pod or the node's labels changed: which policies select this node and why an
  // intent has fewer entries than tasks may have changed with it, so the intents follow in this
  // turn (then Sent by the write below, Applied by the short read-back), not at the next full
  // read-back. Refused batches were rolled back: nothing to do.
  if ((durable_changed || labels_changed_) && persist_error_.empty()) refresh_intents();
  labels_changed_ = false;
  reconcile();
  cover_generation();
  for (auto& c : cmds) {
    try {
      c.finish(*this);
    } catch (const std::exception& e) {
      spdlog::error("command reply failed: {}", e.what());
    }
  }
}

// A snapshot of the host's tasks instead of the events when they were lost (the ring buffer's
// drop counter, more pending than kMaxPendingHostEvents) or the periodic rescan is due.
void Engine::rescan_if_due(uint64_t now) {
  // Bounded like the ring buffer: if the loop fell this far behind, a snapshot is cheaper.
  bool overflow = pending_host_.size() > kMaxPendingHostEvents;
  if (overflow) {
    spdlog::warn("{} task events pending: dropping them and rescanning", pending_host_.size());
    pending_host_.clear();
  }
  const bool discovery = feed_->mode() != TaskDiscovery::Off;
  const bool rescan_due = discovery && rescan_pass_.due(now, node_.core.task_count(), cfg_.rescan_interval_ns);
  if (discovery && (overflow || feed_->lost_events(now) || rescan_due)) {
    std::vector<Event> snapshot;
    const uint64_t started = boottime_ns(), cpu_started = thread_cpu_ns();
    feed_->rescan(node_.core, snapshot);
    pending_host_.clear();  // polled before the snapshot, which supersedes them (HostFeed::rescan)
    for (auto& e : snapshot) apply(e);
    const uint64_t ended = boottime_ns();
    rescan_pass_.ran(started, ended, node_.core.task_count(), cfg_.rescan_interval_ns);
    report_pass(metrics_, "rescan", "rescan of " + std::to_string(snapshot.size()) + " tasks", ended - started,
                thread_cpu_ns() - cpu_started);
    metrics_.rescan();
  }
}

// The pending task events, completed (cgroup, cpuset, title) and applied in order.
void Engine::apply_task_events(uint64_t now) {
  // Task events may cost /proc reads (cgroup v1 hosts, unknown cgroup ids); a command that arrives meanwhile is not kept waiting:
  // the rest stay queued (in order) for the next turn, which starts at once.
  size_t done = 0;
  std::vector<Event> completed;
  while (!pending_host_.empty()) {
    if (done % 8 == 0 && done > 0 && queue_.size() > 0) break;
    completed.clear();
    // The record after the next starts loading its task while this one is completed and applied,
    // and the next one what its loaded task leads to (at 100k tasks each of these lookups is a
    // last-level cache miss; Core::prefetch_task, Core::prefetch_task_dependents).
    if (pending_host_.size() > 2) {
      const auto& next = pending_host_[2].task;
      node_.core.prefetch_task(next.tid, next.tgid, next.cgroup_id);
    }
    if (pending_host_.size() > 1) node_.core.prefetch_task_dependents(pending_host_[1].task.tid);
    feed_->complete(node_.core, std::move(pending_host_.front()), now, completed);
    pending_host_.pop_front();
    for (const auto& e : completed) apply(e);
    ++done;
  }
  if (pending_host_.empty()) {
    completed.clear();
    feed_->refresh_titles(node_.core, now, completed);
    for (const auto& e : completed) apply(e);
  }
}

// Every decision the core made (a window's, or a level change a tick forced): kept for `get
// decisions` and explain, one log record each, and the metrics.
void Engine::record_decisions(const ApplyResult& r) {
  for (const ControllerDecisionRecord& rec : r.decisions) {
    node::Decision d;
    d.unix_ms = now_unix_ms();
    d.record = rec;
    const WindowSignals* w = applying_window_;
    if (w && w->event.kind == rec.kind && w->event.policy == rec.policy) {
      d.tids = w->tids;
      d.cpu_share_mean = w->cpu_share_mean;
      d.cpu_share_max = w->cpu_share_max;
      d.threads_ran = static_cast<uint32_t>(w->threads_ran);
      d.no_signal = w->no_signal;
      d.cpu_pressure_pct = w->cpu_pressure_pct;
      d.pressure_cgroup = w->pressure_cgroup;
    } else {
      // A tick's forced change: the threads it acted on.
      for (const ControllerStatus& c : node_.core.controllers())
        if (c.kind == rec.kind && c.policy == rec.policy)
          for (const auto& t : controlled_threads(node_.core, c.kind, c.policy, c.spec)) d.tids.push_back(t.tid);
      if (rec.rule == ControllerRule::NoSignal) d.no_signal = "no window with a signal";
    }
    emit(decision_record(d));
    metrics_.controller_decision(std::string(to_string(rec.kind)) + "/" + rec.policy, to_string(rec.rule), rec.to);
    decisions_.add(std::move(d));
  }
}

// The controllers' windows that ended by now: each policy's threads read (schedstat), the
// window's signal given to the core at the window's end (time first, so the core decides at that
// time), its decision recorded. A level change rewrites entries: the turn's reconcile writes them.
void Engine::controller_windows() {
  const uint64_t now = boottime_ns();
  // classify: apply's critical-path proposals join the threads measured (CLS-3).
  std::vector<WindowSignals> windows = signal_windows_.due(node_.core, now, activity_.joined());
  if (signal_windows_.schedstat_zero() && !schedstat_zero_logged_) {
    schedstat_zero_logged_ = true;
    spdlog::warn("controller: /proc/<tid>/schedstat reads 0 0 0 for every measured thread (a kernel without "
                 "CONFIG_SCHED_INFO, or schedstats off): no run-delay signal, so every controller stays at or "
                 "returns to its static level (fail closed, CTL-5)");
  }
  if (windows.empty()) return;
  advance_time(false);
  for (const WindowSignals& w : windows) {
    applying_window_ = &w;
    const ApplyResult r = apply(w.event);
    applying_window_ = nullptr;
    if (!r.changed_tids.empty()) turn_changed_ = true;
  }
}

// The roles proposed from activity, when a window is due. The program that watches wakeups may
// not load on this host (no BTF, an older kernel, no CAP_BPF): that is logged once and shown in
// Status, and there are no proposals (fail closed); nothing else depends on them.
void Engine::activity_windows() {
  activity_.gather(node_.core, boottime_ns());
  if (!activity_.unavailable().empty() && !activity_unavailable_logged_) {
    activity_unavailable_logged_ = true;
    spdlog::warn("roles from activity: {}; no roles are proposed on this node (spec.classify has no effect)",
                 activity_.unavailable());
  }
}

// A batch of lease renewals in a step of its own, after this turn's task events are written.
void Engine::renew_leases() {
  if (boottime_ns() >= next_renewal_ns_) {
    advance_time(true);
    reconcile();
    cover_generation();
    // The gap runs from the end of the batch's write: from its start, a batch that writes for
    // longer than the gap would leave none (measured: 98 batches of 1,024 back to back, 232 ms).
    if (renewal_wave_) next_renewal_ns_ = boottime_ns() + kSliceGapNs;
  }
}

// After the turn's writes: what is published (Watch, the log), kept up (the lease ahead, the
// log's size, the heap) and metered.
void Engine::end_turn(uint64_t now) {
  // Written but not read back: the short read-back pass confirms it soon, not a readback_interval later.
  reconciler_->schedule_confirm();
  publish_changes();
  keep_lease_ahead();
  commit_.compact_if_large();
  if (heap_trim_.due(now)) malloc_trim(0);
  metrics_.set_entries(static_cast<double>(node_.core.desired_size()), static_cast<double>(node_.core.actual().size()));
  if (node_.intents.version() != metered_intents_version_) {
    for (auto st : {IntentState::Pending, IntentState::Sent, IntentState::Applied, IntentState::Failed})
      metrics_.set_intents(to_string(st), static_cast<double>(node_.intents.count(st)));
    metered_intents_version_ = node_.intents.version();
  }
}

// The batch's generation covered by the lease, then its inputs written; if either fails the
// batch is rolled back to the snapshot taken before its first change (nothing reached the map
// yet), and every mutating reply of the batch refuses with the reason.
void Engine::commit_batch() {
  const std::string e = commit_.commit();
  if (e.empty()) return;
  changes_.clear();
  turn_changed_ = false;
  persist_error_ = e;
  spdlog::error("a batch of changes was refused and rolled back (state unchanged): {}", e);
}

uint64_t Engine::reported_generation() const { return node_.reported_generation(); }

// Host events move the core's generation too; while the lease cannot be extended nothing above
// the ceiling is written (reconcile) or reported (reported_generation), so the map stays as it
// was and the intents say why (fail closed, INV-4).
void Engine::cover_generation() {
  std::string e;
  if (node_.core.generation() > node_.lease->durable()) e = node_.lease->cover(node_.core.generation());
  if (!e.empty() && e != node_.lease_error)
    spdlog::error("generation lease: {} (the map is not changed until it can be extended)", e);
  else if (e.empty() && !node_.lease_error.empty())
    spdlog::info("generation lease extended again (durable ceiling {})", node_.lease->durable());
  node_.lease_error = e;
}

// The durable ceiling kept kLeaseAheadGenerations above G, at the end of a turn (after its
// replies): a command batch then finds the headroom that lets it skip the undo copy of the whole
// state (batch_reservation.hpp), which at 100k tasks is tens of ms of a call. Without this the
// ceiling was extended only once G passed it, so for the last 64 of every 1,024 generations each
// batch copied the state: 6 % of the calls (127 of 2,000 in bench/daemon-scale at 100k, RPC p99 80
// ms). A failure here changes nothing else (G is still covered); commit_batch extends it as before.
// After a failure (a full or read-only state directory) it tries again a second later, not every
// turn: each try writes a temp file.
void Engine::keep_lease_ahead() {
  if (node_.core.generation() <= node_.lease->floor()) return;  // nothing used yet: the restart's cover did it
  const uint64_t now = boottime_ns();
  if (now < next_ahead_try_ns_) return;
  std::string e = node_.lease->keep_ahead(node_.core.generation(), kLeaseAheadGenerations);
  if (!e.empty() && e != last_ahead_error_)
    spdlog::warn("generation lease: extending ahead of use: {} (command batches copy the state until it can)", e);
  last_ahead_error_ = e;
  next_ahead_try_ns_ = e.empty() ? 0 : now + 1'000'000'000ull;
}

void Engine::settle_intents(const mirror::ApplyReport* report, const std::string& owed_error) {
  node_.settle_intents(report, owed_error, now_unix_ms());
}

void Engine::refresh_intents() { node_.refresh_intents(now_unix_ms()); }

// Kernel state that vanished (spec/daemon.md, "Kernel state that vanishes or lingers"): a pin
// deleted (or the pin root) or replaced gets the held map back; the read-back that follows then
// compares the map's entries with what was written, as always.
void Engine::restore_pins() {
  auto r = maps_->restore_pins();
  if (!r) {
    if (r.error() != pin_repair_) spdlog::error("pinned maps: {} (consumers that open the pins see no map)", r.error());
    pin_repair_ = r.error();
    return;
  }
  if (r->empty()) return;
  pin_repair_.clear();
  for (const auto& line : r.value()) {
    spdlog::warn("pinned map vanished under the daemon: {}; re-pinned the map it holds (its entries intact)", line);
    metrics_.pin_restored();
    ++pins_restored_;
    pin_repair_ += (pin_repair_.empty() ? "" : "; ") + line;
  }
}

// The scheduler's counters and latency histogram from its stats map, with every full read-back.
void Engine::refresh_scheduler_metrics() {
  try {
    auto stats = sched::read_pinned_stats(cfg_.pin_root + "/" + C2C_STATS_MAP_NAME);
    metrics_.set_identity_mismatches(static_cast<double>(stats.identity_mismatches));
    for (const auto& c : sched::kStatCounters)  // identity_mismatches has its own gauge (above)
      if (c.field != &c2c_stats::identity_mismatches)
        metrics_.set_scheduler_counter(c.name, static_cast<double>(stats.*c.field));
    metrics_.set_scheduler_latency(sched::latency_buckets(stats));
  } catch (const std::exception& e) {
    spdlog::debug("stats map: {}", e.what());
  }
  metrics_.set_scheduler_enforcing(scheduler_status().enforcing);
}

void Engine::record(StateChange c) { commit_.record(std::move(c)); }

void Engine::persist() { persist_error_ = commit_.compact(); }

void Engine::publish_changes() {
  // Committed by now (a refused batch was rolled back and cleared): one log line per change and
  // per intent transition.
  for (const auto& c : changes_) emit(change_record(c.log_fields, reported_generation(), c.tids.size()));
  std::vector<Intent> changed;
  // The table is copied and compared only when an intent may have changed (most turns are one
  // task event that changed none).
  if (node_.intents.version() != published_intents_version_) {
    // Both lists come sorted by (kind, name) from the table: one merge pass finds what changed.
    auto after = node_.intents.list();
    auto key = [](const Intent& i) { return std::make_pair(i.kind, std::cref(i.policy)); };
    size_t b = 0;
    for (const auto& in : after) {
      while (b < intents_before_.size() && key(intents_before_[b]) < key(in)) ++b;
      bool same = b < intents_before_.size() && key(intents_before_[b]) == key(in) && intents_before_[b] == in;
      if (!same) changed.push_back(in);
    }
    for (const auto& r : intent_records(intents_before_, after)) emit(r);
    intents_before_ = std::move(after);
    published_intents_version_ = node_.intents.version();
  }
  if (changes_.empty() && changed.empty()) return;
  if (changes_.empty()) changes_.push_back(Change{"intent", {}, {}});
  for (size_t i = 0; i < changes_.size(); ++i) {
    node::ChangeNote ev;
    ev.node_generation = reported_generation();
    ev.event_kind = changes_[i].kind;
    ev.changed_tids = changes_[i].tids;
    if (i + 1 == changes_.size()) ev.intents = changed;
    size_t dropped = watchers_.publish(ev);
    for (size_t d = 0; d < dropped; ++d) {
      metrics_.watcher_dropped();
      spdlog::warn("a Watch client fell more than {} changes behind: its stream is ended", cfg_.watch_queue);
    }
  }
  // A burst's changes (100k exits: ~10 MB of Change records) are not kept as capacity.
  if (changes_.capacity() > kKeptChanges) std::vector<Change>().swap(changes_);
  else changes_.clear();
}

Pod Engine::resolve_pod(Pod p, std::vector<std::string>* warnings) const {
  if (p.cgroup.empty()) {
    p.cgroup = feed_->find_pod_cgroup(p.uid);
    if (p.cgroup.empty() && warnings)
      warnings->push_back("pod " + p.uid + ": no pod cgroup on this node (yet): its tasks cannot be matched");
  }
  if (!p.cpuset && !p.cgroup.empty()) p.cpuset = feed_->cgroup_cpuset(p.cgroup);
  return p;
}

}  // namespace c2c::daemon

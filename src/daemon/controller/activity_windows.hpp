// Roles from activity on this node (issue 46 item 4; spec/daemon.md, "Roles from activity"): the
// processes of every policy whose `spec.classify` is propose or apply are watched with the
// wakeup-edges program (bpf/wakeup_edges.bpf.c through src/host/wakeup_edges.hpp), one activity
// window is read each classify period, the core proposes roles from it (core/role_proposals.hpp)
// and the node's view (node_state/role_proposal_view.hpp) says which policy decides each and what
// it does; the latest per policy is kept for explain, preview and the controllers (classify:
// apply). Imperative shell: the reading is a parameter (ActivitySource), so tests feed it windows.
// Where the program cannot load, that is said once (unavailable(), the engine logs it and Status
// shows it) and there are no proposals (fail closed); nothing else depends on it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/node_api.hpp"
#include "core/core.hpp"
#include "daemon/controller/signal_windows.hpp"
#include "daemon/node_state/role_proposal_view.hpp"
#include "host/wakeup_edges.hpp"

namespace c2c::daemon {

// Where activity comes from: the BPF tracer on a host, a fake in tests.
class ActivitySource {
 public:
  virtual ~ActivitySource() = default;
  // Watch exactly these processes from now on (the first call opens the tracer). "" or why not:
  // an error here means the source cannot work on this host, it is not asked again.
  virtual std::string watch(const std::vector<uint32_t>& tgids) = 0;
  // The cumulative counts so far; nullopt with *err when the maps cannot be read.
  virtual std::optional<host::ActivityReading> read(std::string* err) = 0;
};
// host::WakeupEdgeTracer, opened on the first watch() with a process to watch.
std::unique_ptr<ActivitySource> bpf_activity_source();

// The proposals of one policy's threads from the latest window.
struct PolicyProposals {
  Nanos at = 0;         // the window's end (the core's clock)
  Nanos window_ns = 0;  // its length
  std::vector<ProposalView> proposals;  // sorted by tid; empty: the window proposed nothing
};

class ActivityWindows {
 public:
  static constexpr Nanos kDefaultPeriodNs = 1'000'000'000;  // without a controller: one window a second
  static constexpr Nanos kMinPeriodNs = 100'000'000;        // never shorter (one map walk each)
  explicit ActivityWindows(std::unique_ptr<ActivitySource> source) : source_(std::move(source)) {}

  // Reads a window when one is due at `now` (the core's clock): the watched processes follow the
  // policies, the first reading is a baseline. True when proposals were renewed.
  bool gather(const Core& core, Nanos now);
  // The next window's end (the loop's timer), while some policy classifies and the source works.
  std::optional<Nanos> deadline() const;
  // Why the source does not work on this host ("" while it does, or was not needed yet).
  const std::string& unavailable() const { return unavailable_; }
  // One line for Status: watching what, or unavailable and why, or idle.
  std::string status() const;

  // The latest proposals of a policy (nullptr: no window for it yet).
  const PolicyProposals* of_policy(PolicyKind kind, const std::string& name) const;
  // The latest proposal about a thread, whichever policy decides it.
  std::optional<ProposalView> of_tid(uint32_t tid) const;
  // For the controllers (CLS-3): per policy with classify: apply, its latest proposals and their
  // outcomes, which SignalWindows resolves with controller_members.
  SignalWindows::Joined joined() const;

 private:
  Nanos period(const Core& core) const;
  // The processes of the threads whose entry's policy classifies (at most C2C_WE_MAX_FILTER).
  std::vector<uint32_t> watched_tgids(const Core& core) const;
  void keep(const Core& core, const ActivityWindow& w, Nanos now);

  std::unique_ptr<ActivitySource> source_;
  std::string unavailable_;
  std::string read_error_;  // the last reading's error ("" when it was read)
  std::optional<host::ActivityReading> last_;  // the previous reading (the next window's start)
  Nanos last_at_ = 0, next_at_ = 0;
  Nanos period_ = kDefaultPeriodNs;
  size_t watched_ = 0;
  bool active_ = false;  // some policy classifies
  std::map<std::pair<PolicyKind, std::string>, PolicyProposals> latest_;
};

// A proposal as the node API carries it (explain, preview).
node::Proposal to_node_proposal(const ProposalView& v, Nanos window_ns);
// Preview: the latest proposals for a policy's threads under the previewed spec.classify (a
// new version may turn it off, or to apply): none under off, none before a window has it.
std::vector<node::Proposal> previewed_proposals(const ActivityWindows& a, PolicyKind kind, const std::string& name,
                                                ClassifyMode mode);

}  // namespace c2c::daemon

// The feed's sender: the observer and the policy watch record what the daemon should hold; one
// thread sends it. Watch loops never wait for the daemon: they only take a mutex.
//
// * Coalescing: one slot per key (claim UID, policy kind+name); a newer value replaces an unsent
//   one, so a claim that changed ten times while the daemon was down is sent once.
// * Retries: a failed call is retried with doubling backoff (initial..max). UNAVAILABLE or
//   DEADLINE_EXCEEDED, or a connection that dropped and came back (the daemon restarted), marks
//   the whole current state for a resend: upserts are idempotent, and a stale generation is
//   answered `ignored` (INV-3), which counts as delivered.
// * INVALID_ARGUMENT is reported (naming the field, as the daemon does) and not retried: the same
//   value would be refused again; the next change of that key is sent.
// * Acknowledgements (Preview with acknowledge, "ack/dra/<name>") are sent after every other dirty
//   slot of a round: the daemon acknowledges only a policy it holds at that generation.
// * Claims are this feed's alone on a Kubernetes node: at every (re)connection, once the observer
//   has synced, claims the daemon holds that the feed does not are deleted (a deallocation missed
//   while the feed was down, INV-1). Policies are not pruned this way: an operator may have applied
//   some by hand (claim2core apply).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>

#include <grpcpp/grpcpp.h>

#include "claim2core.grpc.pb.h"
#include "core/model.hpp"

namespace c2c::k8s {

namespace pb = ::claim2core::v1;

// The daemon as the sender sees it (the real one is GrpcFeedTransport; tests use a fake).
class FeedTransport {
 public:
  virtual ~FeedTransport() = default;
  virtual grpc::Status upsert_claim(const pb::UpsertClaimBindingRequest& req, pb::UpsertClaimBindingResponse* resp) = 0;
  virtual grpc::Status delete_claim(const pb::DeleteClaimBindingRequest& req, pb::DeleteClaimBindingResponse* resp) = 0;
  virtual grpc::Status upsert_policy(const pb::UpsertPolicyRequest& req, pb::UpsertPolicyResponse* resp) = 0;
  virtual grpc::Status delete_policy(const pb::DeletePolicyRequest& req, pb::DeletePolicyResponse* resp) = 0;
  virtual grpc::Status list_bindings(pb::ListBindingsResponse* resp) = 0;
  // The cluster-wide preview acknowledgement (Preview with acknowledge) and the status writer's
  // intents; transports that do not need them (tests of the claim path) keep these defaults.
  virtual grpc::Status preview(const pb::PreviewRequest& req, pb::PreviewResponse* resp) {
    (void)req, (void)resp;
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "preview");
  }
  virtual grpc::Status list_intents(pb::ListIntentsResponse* resp) {
    (void)resp;
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "list_intents");
  }
  // The Node object's labels (issue #14). Not pure: a transport without it answers UNIMPLEMENTED.
  virtual grpc::Status set_node_labels(const pb::SetNodeLabelsRequest&, pb::SetNodeLabelsResponse*) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "SetNodeLabels");
  }
  // True once after the connection was lost and is up again (or the first time it is up).
  virtual bool reconnected() = 0;
};

// gRPC over the daemon's Unix socket (unix:PATH), 5 s per call.
class GrpcFeedTransport : public FeedTransport {
 public:
  explicit GrpcFeedTransport(const std::string& socket_path, std::chrono::milliseconds call_timeout = std::chrono::seconds(5));
  grpc::Status upsert_claim(const pb::UpsertClaimBindingRequest& req, pb::UpsertClaimBindingResponse* resp) override;
  grpc::Status delete_claim(const pb::DeleteClaimBindingRequest& req, pb::DeleteClaimBindingResponse* resp) override;
  grpc::Status upsert_policy(const pb::UpsertPolicyRequest& req, pb::UpsertPolicyResponse* resp) override;
  grpc::Status delete_policy(const pb::DeletePolicyRequest& req, pb::DeletePolicyResponse* resp) override;
  grpc::Status list_bindings(pb::ListBindingsResponse* resp) override;
  grpc::Status preview(const pb::PreviewRequest& req, pb::PreviewResponse* resp) override;
  grpc::Status list_intents(pb::ListIntentsResponse* resp) override;
  grpc::Status set_node_labels(const pb::SetNodeLabelsRequest& req, pb::SetNodeLabelsResponse* resp) override;
  bool reconnected() override;

 private:
  std::unique_ptr<grpc::ClientContext> context() const;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::Claim2Core::Stub> stub_;
  std::chrono::milliseconds call_timeout_;
  bool lost_ = true;  // not connected yet
};

struct FeedSenderOptions {
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{5000};
  std::chrono::milliseconds poll{200};  // how often the connection state is looked at when idle
};

struct FeedSenderStats {
  std::atomic<int> sent{0};            // calls answered OK (ignored included)
  std::atomic<int> ignored{0};         // of which the daemon said ignored
  std::atomic<int> refused{0};         // INVALID_ARGUMENT (not retried)
  std::atomic<int> failed{0};          // other failures (retried)
  std::atomic<int> full_resends{0};    // whole state marked for sending again
  std::atomic<int> pruned_claims{0};   // deleted at reconnection because the feed does not hold them
};

class FeedSender {
 public:
  using Notice = std::function<void(const std::string& kind, const std::string& message)>;
  FeedSender(FeedTransport& transport, FeedSenderOptions options, Notice notice);

  // What the daemon should hold. Thread-safe, never blocks on the daemon.
  void set_claim(const std::string& claim_uid, pb::UpsertClaimBindingRequest request);
  void delete_claim(const std::string& claim_uid, int64_t generation);
  void set_policy(const pb::Policy& policy);
  void delete_policy(PolicyKind kind, const std::string& name, int64_t generation);
  // The operator acknowledged this DRA policy's generation in the cluster (policy_status.hpp):
  // Preview with acknowledge, sent after the policy itself; a newer generation of the policy
  // (set_policy) drops an acknowledgement of an older one.
  void acknowledge(const pb::Policy& policy);
  // This node's labels from its Node object: one slot, the newest replaces an unsent one, and it
  // is sent again at every reconnection (a restarted daemon has only its config's labels).
  void set_node_labels(const std::map<std::string, std::string>& labels);
  // The observer has listed everything once: claims may now be pruned at reconnection.
  void claims_synced();

  // The sender thread's body: returns when stop is true.
  void run(const std::atomic<bool>& stop);
  void wake();
  const FeedSenderStats& stats() const { return stats_; }
  // Keys not yet delivered (tests, diagnostics).
  size_t pending() const;

 private:
  using Value = std::variant<pb::UpsertClaimBindingRequest, pb::DeleteClaimBindingRequest, pb::UpsertPolicyRequest,
                             pb::DeletePolicyRequest, pb::PreviewRequest,
                             pb::SetNodeLabelsRequest>;
  struct Slot {
    Value value;
    uint64_t version = 0;  // bumped on every change, so an ack only clears what it sent
    bool dirty = true;
  };
  enum class Outcome { Delivered, Refused, Retry, Unavailable };

  void put_locked(const std::string& key, Value v);
  void mark_all_dirty_locked();
  Outcome send(const std::string& key, const Value& v);
  bool prune_claims();  // false: the daemon could not be asked
  void backoff(const std::atomic<bool>& stop);

  FeedTransport& transport_;
  FeedSenderOptions options_;
  Notice notice_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Slot> slots_;  // "claim/<uid>", "dra/<name>", "node/<name>", "ack/dra/<name>",
                                       // "node-labels"
  uint64_t next_version_ = 1;
  bool claims_synced_ = false;
  bool prune_due_ = true;
  std::chrono::milliseconds current_backoff_;
  FeedSenderStats stats_;
};

}  // namespace c2c::k8s

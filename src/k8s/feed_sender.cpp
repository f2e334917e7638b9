#include "k8s/feed_sender.hpp"

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

namespace c2c::k8s {

// ---- gRPC transport ------------------------------------------------------------------------------

GrpcFeedTransport::GrpcFeedTransport(const std::string& socket_path, std::chrono::milliseconds call_timeout)
    : call_timeout_(call_timeout) {
  grpc::ChannelArguments args;
  // gRPC's own reconnect backoff grows to 2 minutes by default; a restarted daemon should be found
  // within seconds.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  channel_ = grpc::CreateCustomChannel("unix:" + socket_path, grpc::InsecureChannelCredentials(), args);
  stub_ = pb::Claim2Core::NewStub(channel_);
}

std::unique_ptr<grpc::ClientContext> GrpcFeedTransport::context() const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + call_timeout_);
  return ctx;
}

grpc::Status GrpcFeedTransport::upsert_claim(const pb::UpsertClaimBindingRequest& req, pb::UpsertClaimBindingResponse* resp) {
  return stub_->UpsertClaimBinding(context().get(), req, resp);
}
grpc::Status GrpcFeedTransport::delete_claim(const pb::DeleteClaimBindingRequest& req, pb::DeleteClaimBindingResponse* resp) {
  return stub_->DeleteClaimBinding(context().get(), req, resp);
}
grpc::Status GrpcFeedTransport::upsert_policy(const pb::UpsertPolicyRequest& req, pb::UpsertPolicyResponse* resp) {
  return stub_->UpsertPolicy(context().get(), req, resp);
}
grpc::Status GrpcFeedTransport::delete_policy(const pb::DeletePolicyRequest& req, pb::DeletePolicyResponse* resp) {
  return stub_->DeletePolicy(context().get(), req, resp);
}
grpc::Status GrpcFeedTransport::set_node_labels(const pb::SetNodeLabelsRequest& req, pb::SetNodeLabelsResponse* resp) {
  return stub_->SetNodeLabels(context().get(), req, resp);
}
grpc::Status GrpcFeedTransport::list_bindings(pb::ListBindingsResponse* resp) {
  return stub_->ListBindings(context().get(), pb::ListBindingsRequest(), resp);
}

grpc::Status GrpcFeedTransport::preview(const pb::PreviewRequest& req, pb::PreviewResponse* resp) {
  return stub_->Preview(context().get(), req, resp);
}
grpc::Status GrpcFeedTransport::list_intents(pb::ListIntentsResponse* resp) {
  return stub_->ListIntents(context().get(), pb::ListIntentsRequest(), resp);
}

bool GrpcFeedTransport::reconnected() {
  // A dropped connection leaves the channel IDLE until someone asks for one (try_to_connect), so
  // polling sees every drop, even when the daemon came back in between.
  auto state = channel_->GetState(/*try_to_connect=*/true);
  if (state != GRPC_CHANNEL_READY) {
    lost_ = true;
    return false;
  }
  if (!lost_) return false;
  lost_ = false;
  return true;
}

// ---- sender ----------------------------------------------------------------------------------------

namespace {

std::string policy_key(pb::PolicyKind kind, const std::string& name) {
  return (kind == pb::DRA_EXECUTION_POLICY ? "dra/" : "node/") + name;
}

bool is_delete(const auto& v) {
  return std::holds_alternative<pb::DeleteClaimBindingRequest>(v) || std::holds_alternative<pb::DeletePolicyRequest>(v);
}

}  // namespace

FeedSender::FeedSender(FeedTransport& transport, FeedSenderOptions options, Notice notice)
    : transport_(transport), options_(options), notice_(std::move(notice)), current_backoff_(options.initial_backoff) {}

void FeedSender::put_locked(const std::string& key, Value v) {
  Slot& s = slots_[key];
  s.value = std::move(v);
  s.version = next_version_++;
  s.dirty = true;
}

void FeedSender::set_claim(const std::string& claim_uid, pb::UpsertClaimBindingRequest request) {
  std::lock_guard<std::mutex> l(mu_);
  put_locked("claim/" + claim_uid, std::move(request));
  cv_.notify_all();
}

void FeedSender::delete_claim(const std::string& claim_uid, int64_t generation) {
  pb::DeleteClaimBindingRequest req;
  req.set_claim_uid(claim_uid);
  req.set_claim_generation(generation);
  std::lock_guard<std::mutex> l(mu_);
  put_locked("claim/" + claim_uid, std::move(req));
  cv_.notify_all();
}

void FeedSender::set_policy(const pb::Policy& policy) {
  pb::UpsertPolicyRequest req;
  *req.mutable_policy() = policy;
  std::string key = policy.has_dra() ? policy_key(pb::DRA_EXECUTION_POLICY, policy.dra().name())
                                     : policy_key(pb::NODE_SCHEDULING_POLICY, policy.node().name());
  std::lock_guard<std::mutex> l(mu_);
  if (policy.has_dra()) {
    auto ack = slots_.find("ack/" + key);
    if (ack != slots_.end() &&
        std::get<pb::PreviewRequest>(ack->second.value).policy().dra().generation() != policy.dra().generation())
      slots_.erase(ack);  // acknowledged an older generation: not this one
  }
  put_locked(key, std::move(req));
  cv_.notify_all();
}

void FeedSender::acknowledge(const pb::Policy& policy) {
  if (!policy.has_dra()) return;  // node policies need no preview
  pb::PreviewRequest req;
  *req.mutable_policy() = policy;
  req.set_acknowledge(true);
  std::lock_guard<std::mutex> l(mu_);
  put_locked("ack/" + policy_key(pb::DRA_EXECUTION_POLICY, policy.dra().name()), std::move(req));
  cv_.notify_all();
}

void FeedSender::delete_policy(PolicyKind kind, const std::string& name, int64_t generation) {
  pb::DeletePolicyRequest req;
  req.set_kind(kind == PolicyKind::Dra ? pb::DRA_EXECUTION_POLICY : pb::NODE_SCHEDULING_POLICY);
  req.set_name(name);
  req.set_generation(generation);
  // The key before the move: argument evaluation order is unspecified, and a moved-from request
  // has no kind (a DRA policy's delete went to "node/<name>", beside its unsent upsert).
  const std::string key = policy_key(req.kind(), name);
  std::lock_guard<std::mutex> l(mu_);
  slots_.erase("ack/" + key);
  put_locked(key, std::move(req));
  cv_.notify_all();
}

void FeedSender::set_node_labels(const std::map<std::string, std::string>& labels) {
  pb::SetNodeLabelsRequest req;
  req.mutable_labels()->insert(labels.begin(), labels.end());
  std::lock_guard<std::mutex> l(mu_);
  put_locked("node-labels", std::move(req));
  cv_.notify_all();
}

void FeedSender::claims_synced() {
  std::lock_guard<std::mutex> l(mu_);
  claims_synced_ = true;
  cv_.notify_all();
}

void FeedSender::wake() { cv_.notify_all(); }

size_t FeedSender::pending() const {
  std::lock_guard<std::mutex> l(mu_);
  size_t n = 0;
  for (const auto& [_, s] : slots_) n += s.dirty ? 1 : 0;
  return n;
}

void FeedSender::mark_all_dirty_locked() {
  for (auto& [_, s] : slots_) s.dirty = true;
  prune_due_ = true;
  ++stats_.full_resends;
}

FeedSender::Outcome FeedSender::send(const std::string& key, const Value& v) {
  grpc::Status st;
  bool ignored = false;
  std::string message;
  if (auto* uc = std::get_if<pb::UpsertClaimBindingRequest>(&v)) {
    pb::UpsertClaimBindingResponse r;
    st = transport_.upsert_claim(*uc, &r);
    ignored = r.ignored(), message = r.message();
  } else if (auto* dc = std::get_if<pb::DeleteClaimBindingRequest>(&v)) {
    pb::DeleteClaimBindingResponse r;
    st = transport_.delete_claim(*dc, &r);
    ignored = r.ignored();
  } else if (auto* up = std::get_if<pb::UpsertPolicyRequest>(&v)) {
    pb::UpsertPolicyResponse r;
    st = transport_.upsert_policy(*up, &r);
    ignored = r.ignored(), message = r.message();
  } else if (auto* nl = std::get_if<pb::SetNodeLabelsRequest>(&v)) {
    pb::SetNodeLabelsResponse r;
    st = transport_.set_node_labels(*nl, &r);
    ignored = r.ignored();
  } else if (auto* dp = std::get_if<pb::DeletePolicyRequest>(&v)) {
    pb::DeletePolicyResponse r;
    st = transport_.delete_policy(*dp, &r);
    ignored = r.ignored(), message = r.message();
  } else {
    pb::PreviewResponse r;
    st = transport_.preview(std::get<pb::PreviewRequest>(v), &r);
    // Not acknowledged: e.g. already previewed (a resend), or the daemon holds another generation.
    ignored = !r.acknowledged();
    for (const auto& w : r.warnings()) message += (message.empty() ? "" : "; ") + w;
    if (st.ok() && r.acknowledged())
      notice_("acknowledged", key + ": the cluster's acknowledgement of generation " +
                                  std::to_string(std::get<pb::PreviewRequest>(v).policy().dra().generation()) +
                                  " recorded by the daemon");
  }
  const char* what = is_delete(v) ? "delete " : std::holds_alternative<pb::PreviewRequest>(v) ? "acknowledge " : "upsert ";
  if (st.ok()) {
    ++stats_.sent;
    if (ignored) {
      ++stats_.ignored;
      notice_("ignored", what + key + ": " + (message.empty() ? "ignored by the daemon" : message));
    }
    return Outcome::Delivered;
  }
  std::string why = what + key + ": " + std::to_string(st.error_code()) + " " + st.error_message();
  if (st.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
    ++stats_.refused;
    notice_("refused", "daemon refused " + why);
    return Outcome::Refused;
  }
  ++stats_.failed;
  notice_("error", why);
  if (st.error_code() == grpc::StatusCode::UNAVAILABLE || st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
    return Outcome::Unavailable;
  return Outcome::Retry;
}

bool FeedSender::prune_claims() {
  pb::ListBindingsResponse resp;
  grpc::Status st = transport_.list_bindings(&resp);
  if (!st.ok()) {
    notice_("error", "ListBindings (pruning claims): " + std::to_string(st.error_code()) + " " + st.error_message());
    return false;
  }
  std::map<std::string, int64_t> held;  // claim UID -> generation the daemon holds
  for (const auto& b : resp.bindings()) held[b.claim_uid()] = b.claim_generation();
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [uid, gen] : held) {
    if (slots_.count("claim/" + uid)) continue;  // ours (an upsert, or a delete on its way)
    pb::DeleteClaimBindingRequest req;
    req.set_claim_uid(uid);
    req.set_claim_generation(gen);
    put_locked("claim/" + uid, std::move(req));
    ++stats_.pruned_claims;
    notice_("prune", "claim " + uid + " is held by the daemon but not allocated to this node any more: deleting (INV-1)");
  }
  return true;
}

void FeedSender::backoff(const std::atomic<bool>& stop) {
  auto until = std::chrono::steady_clock::now() + current_backoff_;
  while (!stop && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  current_backoff_ = std::min(current_backoff_ * 2, options_.max_backoff);
}

void FeedSender::run(const std::atomic<bool>& stop) {
  while (!stop) {
    if (transport_.reconnected()) {
      std::lock_guard<std::mutex> l(mu_);
      mark_all_dirty_locked();
      notice_("connected", "connected to claim2cored: sending the whole current state");
    }
    bool prune = false;
    std::vector<std::pair<std::string, Slot>> batch;
    {
      std::unique_lock<std::mutex> l(mu_);
      prune = prune_due_ && claims_synced_;
      if (!prune) {
        for (const auto& [key, s] : slots_)
          if (s.dirty) batch.emplace_back(key, s);
        if (batch.empty()) {
          cv_.wait_for(l, options_.poll);
          continue;
        }
        std::stable_partition(batch.begin(), batch.end(), [](const auto& kv) { return kv.first.rfind("ack/", 0) != 0; });
      }
    }
    if (prune) {
      if (prune_claims()) {
        std::lock_guard<std::mutex> l(mu_);
        prune_due_ = false;
      } else {
        backoff(stop);
      }
      continue;
    }
    for (const auto& [key, slot] : batch) {
      if (stop) return;
      Outcome o = send(key, slot.value);
      if (o == Outcome::Delivered || o == Outcome::Refused) {
        current_backoff_ = options_.initial_backoff;
        std::lock_guard<std::mutex> l(mu_);
        auto it = slots_.find(key);
        if (it != slots_.end() && it->second.version == slot.version) {
          // A delivered delete leaves nothing to resend; a live value stays for full resends.
          if (is_delete(it->second.value)) slots_.erase(it);
          else it->second.dirty = false;
        }
        continue;
      }
      if (o == Outcome::Unavailable) {
        std::lock_guard<std::mutex> l(mu_);
        mark_all_dirty_locked();
      }
      backoff(stop);
      break;
    }
  }
}

}  // namespace c2c::k8s

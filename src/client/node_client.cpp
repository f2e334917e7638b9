#include "client/node_client.hpp"

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include "api/convert.hpp"
#include "api/replies_proto.hpp"
#include "claim2core.grpc.pb.h"

namespace c2c::client {
namespace {

namespace pb = ::claim2core::v1;
using Stub = pb::Claim2Core::Stub;

std::string code_name(grpc::StatusCode c) {
  switch (c) {
    case grpc::OK: return "OK";
    case grpc::CANCELLED: return "CANCELLED";
    case grpc::UNKNOWN: return "UNKNOWN";
    case grpc::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::NOT_FOUND: return "NOT_FOUND";
    case grpc::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::ABORTED: return "ABORTED";
    case grpc::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::INTERNAL: return "INTERNAL";
    case grpc::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::DATA_LOSS: return "DATA_LOSS";
    default: return "CODE_" + std::to_string(static_cast<int>(c));
  }
}

CallError error_of(const grpc::Status& s) {
  return CallError{static_cast<int>(s.error_code()), code_name(s.error_code()), s.error_message()};
}

}  // namespace

struct NodeClient::Impl {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<Stub> stub;
  std::chrono::milliseconds timeout;

  std::unique_ptr<grpc::ClientContext> context(bool with_deadline = true) const {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (with_deadline) ctx->set_deadline(std::chrono::system_clock::now() + timeout);
    ctx->set_wait_for_ready(false);
    return ctx;
  }

  // One unary call: the reply converted by `conv`, or the status as a CallError.
  template <class Req, class Resp, class Conv>
  auto call(grpc::Status (Stub::*rpc)(grpc::ClientContext*, const Req&, Resp*), const Req& req, Conv conv) const
      -> Result<decltype(conv(std::declval<const Resp&>()))> {
    Resp resp;
    auto ctx = context();
    grpc::Status s = ((*stub).*rpc)(ctx.get(), req, &resp);
    if (!s.ok()) return error_of(s);
    return conv(resp);
  }
};

struct ChangeStream::Impl {
  std::unique_ptr<grpc::ClientContext> ctx;
  std::unique_ptr<grpc::ClientReader<pb::ChangeEvent>> reader;
};

ChangeStream::ChangeStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ChangeStream::~ChangeStream() = default;
ChangeStream::ChangeStream(ChangeStream&&) noexcept = default;
void ChangeStream::wait_subscribed() { impl_->reader->WaitForInitialMetadata(); }
bool ChangeStream::next(reply::Change& out) {
  pb::ChangeEvent ev;
  if (!impl_->reader->Read(&ev)) return false;
  out = api::plain(ev);
  return true;
}
void ChangeStream::cancel() { impl_->ctx->TryCancel(); }
std::optional<CallError> ChangeStream::finish() {
  grpc::Status s = impl_->reader->Finish();
  if (s.ok()) return std::nullopt;
  return error_of(s);
}

NodeClient::NodeClient(std::shared_ptr<grpc::Channel> channel, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->channel = std::move(channel);
  impl_->stub = pb::Claim2Core::NewStub(impl_->channel);
  impl_->timeout = timeout;
}
NodeClient::NodeClient(const ConnectionOptions& o) : NodeClient(open_channel(o), o.timeout) {}
NodeClient::~NodeClient() = default;
NodeClient::NodeClient(NodeClient&&) noexcept = default;

Result<reply::Upsert> NodeClient::upsert_policy(const AnyPolicy& p, bool require_named_node) const {
  pb::UpsertPolicyRequest req;
  *req.mutable_policy() = api::to_proto(p);
  req.set_require_named_node(require_named_node);
  return impl_->call(&Stub::UpsertPolicy, req, [](const pb::UpsertPolicyResponse& r) { return api::plain(r); });
}

Result<reply::Delete> NodeClient::delete_policy(PolicyKind kind, const std::string& name, int64_t generation) const {
  pb::DeletePolicyRequest req;
  req.set_kind(api::to_proto(kind));
  req.set_name(name);
  req.set_generation(generation);
  return impl_->call(&Stub::DeletePolicy, req, [](const pb::DeletePolicyResponse& r) { return api::plain(r); });
}

Result<reply::Preview> NodeClient::preview(const AnyPolicy& p, bool acknowledge) const {
  pb::PreviewRequest req;
  *req.mutable_policy() = api::to_proto(p);
  req.set_acknowledge(acknowledge);
  return impl_->call(&Stub::Preview, req, [](const pb::PreviewResponse& r) { return api::plain(r); });
}

Result<std::vector<reply::Intent>> NodeClient::list_intents(const std::string& policy,
                                                             std::optional<PolicyKind> kind) const {
  pb::ListIntentsRequest req;
  req.set_policy(policy);
  if (kind) req.set_kind(api::to_proto(*kind));
  return impl_->call(&Stub::ListIntents, req, [](const pb::ListIntentsResponse& r) { return api::plain(r); });
}

Result<reply::Explain> NodeClient::explain(uint32_t tid) const {
  pb::ExplainRequest req;
  req.set_tid(tid);
  return impl_->call(&Stub::Explain, req, [](const pb::ExplainResponse& r) { return api::plain(r); });
}

Result<reply::Decisions> NodeClient::list_decisions(const std::string& policy, uint32_t tid, uint32_t limit) const {
  pb::ListDecisionsRequest req;
  req.set_policy(policy);
  req.set_tid(tid);
  req.set_limit(limit);
  return impl_->call(&Stub::ListDecisions, req, [](const pb::ListDecisionsResponse& r) { return api::plain(r); });
}

Result<reply::Status> NodeClient::status() const {
  return impl_->call(&Stub::Status, pb::StatusRequest{}, [](const pb::StatusResponse& r) { return api::plain(r); });
}

Result<std::vector<reply::Task>> NodeClient::list_tasks(const TaskFilter& f) const {
  pb::ListTasksRequest req;
  req.set_comm_regex(f.comm_regex);
  req.set_title_regex(f.title_regex);
  req.set_tgid(f.tgid);
  req.set_matched_only(f.matched_only);
  return impl_->call(&Stub::ListTasks, req, [](const pb::ListTasksResponse& r) { return api::plain(r); });
}

Result<reply::Policies> NodeClient::list_policies() const {
  auto r = impl_->call(&Stub::ListPolicies, pb::ListPoliciesRequest{},
                       [](const pb::ListPoliciesResponse& m) { return api::plain(m); });
  if (!r.ok()) return r.error();
  if (!r->ok())  // the daemon sent a policy this client cannot read
    return CallError{static_cast<int>(grpc::INTERNAL), "INTERNAL",
                     "unreadable reply: " + r->error.field + ": " + r->error.message};
  return std::move(*r.value().value);
}

Result<reply::Bindings> NodeClient::list_bindings() const {
  return impl_->call(&Stub::ListBindings, pb::ListBindingsRequest{},
                     [](const pb::ListBindingsResponse& r) { return api::plain(r); });
}

Result<reply::Role> NodeClient::register_task_role(uint32_t tid, uint64_t start, const std::string& role) const {
  pb::RegisterTaskRoleRequest req;
  req.set_tid(tid);
  req.set_start(start);
  req.set_role(role);
  return impl_->call(&Stub::RegisterTaskRole, req, [](const pb::RegisterTaskRoleResponse& r) { return api::plain(r); });
}

ChangeStream NodeClient::watch() const {
  auto impl = std::make_unique<ChangeStream::Impl>();
  impl->ctx = impl_->context(/*with_deadline=*/false);
  impl->reader = impl_->stub->Watch(impl->ctx.get(), pb::WatchRequest{});
  return ChangeStream(std::move(impl));
}

}  // namespace c2c::client

#include "daemon/service/service.hpp"

#include <re2/re2.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>

#include "api/convert.hpp"
#include "api/node_api_proto.hpp"
#include "daemon/node_state/task_listing.hpp"

namespace c2c::daemon {
namespace {

const char* code_name(grpc::StatusCode c) {
  switch (c) {
    case grpc::OK: return "OK";
    case grpc::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::INTERNAL: return "INTERNAL";
    case grpc::NOT_FOUND: return "NOT_FOUND";
    case grpc::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::PERMISSION_DENIED: return "PERMISSION_DENIED";
    default: return "OTHER";
  }
}

grpc::Status invalid(const std::string& field, const std::string& message) {
  return grpc::Status(grpc::INVALID_ARGUMENT, field + ": " + message);
}
grpc::Status invalid(const FieldError& e) { return invalid(e.field, e.message); }

// One unary call: the parsed request, the response, the reactor to finish.
template <class Req, class Resp>
struct Call {
  Req req;
  Resp resp;
  grpc::ServerUnaryReactor* reactor = nullptr;
  grpc::ByteBuffer* out = nullptr;
  const char* method = "";
  Metrics* metrics = nullptr;
  grpc::Status status = grpc::Status::OK;  // set by the apply phase when it refuses
  bool durable = false;                    // this call changed a durable input
  bool done = false;                       // finished already (refused before the engine saw it)

  void finish(const grpc::Status& st) {
    if (st.ok()) {
      std::string bytes = resp.SerializeAsString();
      grpc::Slice slice(bytes);
      *out = grpc::ByteBuffer(&slice, 1);
    }
    done = true;
    metrics->rpc(method, code_name(st.error_code()));
    reactor->Finish(st);
  }
};

template <class Req, class Resp>
std::shared_ptr<Call<Req, Resp>> begin(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* in,
                                       grpc::ByteBuffer* out, const char* method, uint32_t max_bytes, Metrics& m) {
  auto call = std::make_shared<Call<Req, Resp>>();
  call->reactor = ctx->DefaultReactor();
  call->out = out;
  call->method = method;
  call->metrics = &m;
  if (in->Length() > max_bytes) {
    call->finish(invalid("request", std::to_string(in->Length()) + " bytes, more than max_message_bytes (" +
                                        std::to_string(max_bytes) + ")"));
    return call;
  }
  std::vector<grpc::Slice> slices;
  if (!in->Dump(&slices).ok()) {
    call->finish(invalid("request", "unreadable request bytes"));
    return call;
  }
  std::string bytes;
  bytes.reserve(in->Length());
  for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  if (!call->req.ParseFromString(bytes)) {
    call->finish(invalid("request", std::string("not a valid ") + Req::descriptor()->full_name() +
                                        " message (malformed protobuf or invalid UTF-8 in a string)"));
    return call;
  }
  return call;
}

// The request's `policy` field as a core policy; on a refusal the call is finished with
// INVALID_ARGUMENT naming the field (shared by UpsertPolicy and Preview).
template <class C>
std::optional<AnyPolicy> policy_of(C& call) {
  if (!call.req.has_policy()) {
    call.finish(invalid("policy", "is required"));
    return std::nullopt;
  }
  // Wire checks only: the core validates the policy (and compiles its regexes) once, in apply or
  // preview, and its refusal comes back as a typed node::Refusal.
  auto conv = api::from_proto(call.req.policy(), "policy", api::Check::Wire);
  if (!conv.ok()) {
    call.finish(invalid(conv.error));
    return std::nullopt;
  }
  return *conv.value;
}

// Runs apply in the loop's apply phase and finish after persist + plan + apply.
template <class C>
void submit(Engine& engine, const std::shared_ptr<C>& call, std::function<bool(Engine&)> apply,
            std::function<void(Engine&)> finish) {
  Command cmd;
  cmd.request_bytes = call->req.ByteSizeLong();
  cmd.apply = [call, apply = std::move(apply)](Engine& e) {
    call->durable = apply(e);
    return call->durable;
  };
  cmd.finish = [call, finish = std::move(finish)](Engine& e) {
    if (!call->status.ok()) {
      call->finish(call->status);
      return;
    }
    // The batch was rolled back (Engine::commit_batch): nothing of it is live or durable.
    if (call->durable && !e.persist_error().empty()) {
      call->finish(grpc::Status(grpc::UNAVAILABLE, "not applied, state unchanged: " + e.persist_error() +
                                                       " (retry once the state directory can be written)"));
      return;
    }
    finish(e);
    call->finish(grpc::Status::OK);
  };
  if (!engine.submit(std::move(cmd)))
    call->finish(grpc::Status(grpc::UNAVAILABLE, "claim2cored is draining (SIGTERM): retry against the restarted daemon"));
}

grpc::Status refused(const node::Refusal& r, const std::vector<int>& binding_index = {}) {
  return invalid(api::request_field(r, binding_index), r.message);
}

// Every mutating RPC answers a node::Write alike: a refusal becomes the call's status (nothing
// changed), an ignored write says so with its message (stale or duplicate input, INV-3), and the
// write's durability is what the batch must persist. Returns that durability.
template <class C>
bool answer_write(C& call, const node::Write& w, const std::vector<int>& binding_index = {}) {
  if (w.refused) {
    call.status = refused(*w.refused, binding_index);
    return false;
  }
  call.resp.set_ignored(w.ignored);
  if constexpr (requires { call.resp.set_message(w.message); })
    if (w.ignored) call.resp.set_message(w.message);
  return w.durable;
}

std::optional<FieldError> check_name(const std::string& field, const std::string& s) {
  if (s.empty()) return FieldError{field, "must not be empty"};
  return api::check_string(field, s, 253);
}

}  // namespace

grpc::ServerUnaryReactor* Service::UpsertPolicy(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::UpsertPolicyRequest, pb::UpsertPolicyResponse>(ctx, in, out, "UpsertPolicy", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  auto parsed = policy_of(*call);
  if (!parsed) return reactor;
  AnyPolicy policy = *parsed;
  submit(
      engine_, call,
      [call, policy](Engine& e) {
        auto w = e.upsert_policy(policy, call->req.require_named_node());
        if (!w.refused) {
          call->resp.set_node_selected(!w.node_not_selected);
          if (w.node_not_selected) call->resp.set_node_not_selected(*w.node_not_selected);
          for (const auto& x : w.warnings) call->resp.add_warnings(x);
        }
        return answer_write(*call, w);
      },
      [call, policy](Engine& e) {
        auto [kind, name] = policy_id(policy);
        auto r = e.policy_reply(kind, name);
        call->resp.set_node(r.node);
        if (r.policy_generation) call->resp.set_policy_generation(*r.policy_generation);
        call->resp.set_node_generation(r.node_generation);
        if (r.intent) api::to_proto(*r.intent, call->resp.mutable_intent());
      });
  return reactor;
}

grpc::ServerUnaryReactor* Service::DeletePolicy(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::DeletePolicyRequest, pb::DeletePolicyResponse>(ctx, in, out, "DeletePolicy", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  auto kind = api::kind_from_proto(call->req.kind(), "kind");
  if (!kind.ok()) {
    call->finish(invalid(kind.error));
    return reactor;
  }
  if (auto e = check_name("name", call->req.name())) {
    call->finish(invalid(*e));
    return reactor;
  }
  if (call->req.generation() < 0) {
    call->finish(invalid("generation", "must not be negative (0: the live generation)"));
    return reactor;
  }
  submit(
      engine_, call,
      [call, k = *kind.value](Engine& e) {
        return answer_write(*call, e.delete_policy(k, call->req.name(), call->req.generation()));
      },
      [call](Engine& e) { call->resp.set_node_generation(e.reported_generation()); });
  return reactor;
}

grpc::ServerUnaryReactor* Service::UpsertClaimBinding(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::UpsertClaimBindingRequest, pb::UpsertClaimBindingResponse>(ctx, in, out, "UpsertClaimBinding",
                                                                                    max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  auto claims = api::claims_from_bindings(call->req.bindings(), "bindings");
  if (!claims.ok()) {
    call->finish(invalid(claims.error));
    return reactor;
  }
  if (call->req.pods_size() > static_cast<int>(api::kMaxListItems)) {
    call->finish(invalid("pods", "more than " + std::to_string(api::kMaxListItems) + " pods"));
    return reactor;
  }
  std::vector<Pod> pods;
  std::set<std::string> pod_uids;
  for (int i = 0; i < call->req.pods_size(); ++i) {
    std::string f = "pods[" + std::to_string(i) + "]";
    auto p = api::from_proto(call->req.pods(i), f);
    if (!p.ok()) {
      call->finish(invalid(p.error));
      return reactor;
    }
    if (!pod_uids.insert(p.value->uid).second) {
      call->finish(invalid(f + ".uid", "pod " + p.value->uid + " appears twice"));
      return reactor;
    }
    pods.push_back(*p.value);
  }
  // The first binding of each claim (claims come in first-appearance order), to name the field
  // of a refusal.
  std::vector<int> first_binding;
  std::set<std::string> seen;
  for (int i = 0; i < call->req.bindings_size(); ++i)
    if (seen.insert(call->req.bindings(i).claim_uid()).second) first_binding.push_back(i);
  submit(
      engine_, call,
      [call, claims = *claims.value, pods, first_binding](Engine& e) {
        auto w = e.bind_claims(claims, pods);
        if (!w.refused)
          for (const auto& x : w.warnings) call->resp.add_warnings(x);
        return answer_write(*call, w, first_binding);
      },
      [call](Engine& e) { call->resp.set_node_generation(e.reported_generation()); });
  return reactor;
}

grpc::ServerUnaryReactor* Service::DeleteClaimBinding(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::DeleteClaimBindingRequest, pb::DeleteClaimBindingResponse>(ctx, in, out, "DeleteClaimBinding",
                                                                                    max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  if (auto e = check_name("claim_uid", call->req.claim_uid())) {
    call->finish(invalid(*e));
    return reactor;
  }
  if (call->req.claim_generation() < 0) {
    call->finish(invalid("claim_generation", "must not be negative (0: the live generation)"));
    return reactor;
  }
  submit(
      engine_, call,
      [call](Engine& e) {
        return answer_write(*call, e.unbind_claim(call->req.claim_uid(), call->req.claim_generation()));
      },
      [call](Engine& e) { call->resp.set_node_generation(e.reported_generation()); });
  return reactor;
}

grpc::ServerUnaryReactor* Service::Preview(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::PreviewRequest, pb::PreviewResponse>(ctx, in, out, "Preview", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  auto parsed = policy_of(*call);
  if (!parsed) return reactor;
  submit(
      engine_, call,
      [call, policy = *parsed, ack = call->req.acknowledge()](Engine& e) {
        auto r = e.preview(policy, ack);
        if (r.refused) {
          call->status = refused(*r.refused);
          return false;
        }
        call->resp = api::to_proto(r);
        return r.durable;
      },
      [](Engine&) {});
  return reactor;
}

grpc::ServerUnaryReactor* Service::ListIntents(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::ListIntentsRequest, pb::ListIntentsResponse>(ctx, in, out, "ListIntents", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  std::optional<PolicyKind> kind;
  if (call->req.kind() != pb::POLICY_KIND_UNSPECIFIED) {
    auto k = api::kind_from_proto(call->req.kind(), "kind");
    if (!k.ok()) {
      call->finish(invalid(k.error));
      return reactor;
    }
    kind = *k.value;
  }
  if (auto e = api::check_string("policy", call->req.policy(), 253)) {
    call->finish(invalid(*e));
    return reactor;
  }
  submit(engine_, call, [](Engine&) { return false; },
         [call, kind](Engine& e) {
           for (const auto& intent : e.list_intents(call->req.policy(), kind)) api::to_proto(intent, call->resp.add_intents());
         });
  return reactor;
}

grpc::ServerUnaryReactor* Service::Explain(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::ExplainRequest, pb::ExplainResponse>(ctx, in, out, "Explain", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  if (call->req.tid() == 0) {
    call->finish(invalid("tid", "must be a positive thread id"));
    return reactor;
  }
  submit(engine_, call, [](Engine&) { return false; },
         [call](Engine& e) {
           if (auto l = e.explain(call->req.tid())) {
             call->resp.set_found(true);
             *call->resp.mutable_lineage() = api::to_proto(*l);
           }
           // Boost inheritance (issue 43 item 3): "boost inherited from tid N", as the scheduler counted it.
           if (auto c = e.task_counters(call->req.tid()); c && c->inherited_runs) {
             auto* i = call->resp.mutable_inherited();
             i->set_runs(c->inherited_runs);
             i->set_from_tid(c->inherited_from);
             i->set_depth(c->inherited_depth);
           }
           // The controller acting on the thread, and its last decisions about it (issue 46).
           if (auto c = e.explain_controller(call->req.tid(), 8)) {
             for (const auto& s : c->controllers) api::to_proto(s, call->resp.mutable_controller());
             for (const auto& d : c->decisions) api::to_proto(d, call->resp.add_decisions());
           }
           // The role proposed for it from activity (issue 46 item 4).
           if (auto p = e.explain_proposal(call->req.tid())) api::to_proto(*p, call->resp.add_proposals());
         });
  return reactor;
}

grpc::ServerUnaryReactor* Service::ListDecisions(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::ListDecisionsRequest, pb::ListDecisionsResponse>(ctx, in, out, "ListDecisions", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  // "<Kind>/<name>" or a name: a name's bound and the kind's longest prefix.
  if (auto e = api::check_string("policy", call->req.policy(), 253 + 32)) {
    call->finish(invalid(*e));
    return reactor;
  }
  submit(engine_, call, [](Engine&) { return false; },
         [call](Engine& e) {
           const auto d = e.list_decisions(call->req.policy(), call->req.tid(), call->req.limit());
           for (const auto& x : d.decisions) api::to_proto(x, call->resp.add_decisions());
           for (const auto& c : d.controllers) api::to_proto(c, call->resp.add_controllers());
         });
  return reactor;
}

// Every peer of the gRPC socket is root or an allowed uid (UnixListener refuses the others at
// connect; TCP needs a client certificate): it may label any thread. Workloads of other uids use
// the role socket (role_socket.hpp), where the own-thread-group rule applies.
grpc::ServerUnaryReactor* Service::RegisterTaskRole(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::RegisterTaskRoleRequest, pb::RegisterTaskRoleResponse>(ctx, in, out, "RegisterTaskRole",
                                                                              max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  node::RoleRequest q;
  q.tid = call->req.tid();
  q.start = call->req.start();
  q.role = call->req.role();
  q.caller.privileged = true;
  submit(
      engine_, call,
      [call, q](Engine& e) {
        auto r = e.register_role(q);
        using Code = node::RoleReply::Code;
        const std::string what = r.field.empty() ? r.message : r.field + ": " + r.message;
        switch (r.code) {
          case Code::Ok: break;
          case Code::Invalid: call->status = invalid(r.field, r.message); break;
          case Code::PermissionDenied: call->status = grpc::Status(grpc::PERMISSION_DENIED, what); break;
          case Code::NotFound: call->status = grpc::Status(grpc::NOT_FOUND, what); break;
          case Code::StartMismatch: call->status = grpc::Status(grpc::FAILED_PRECONDITION, what); break;
          case Code::CallerExited: call->status = grpc::Status(grpc::UNAUTHENTICATED, what); break;
        }
        call->resp.set_tid(r.tid);
        call->resp.set_start(r.start);
        call->resp.set_tgid(r.tgid);
        call->resp.set_role(r.role);
        call->resp.set_changed(r.changed);
        return r.durable;
      },
      [call](Engine& e) { call->resp.set_node_generation(e.reported_generation()); });
  return reactor;
}

grpc::ServerUnaryReactor* Service::Status(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::StatusRequest, pb::StatusResponse>(ctx, in, out, "Status", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  submit(engine_, call, [](Engine&) { return false; }, [call](Engine& e) { call->resp = api::to_proto(e.status()); });
  return reactor;
}

grpc::ServerUnaryReactor* Service::ListTasks(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::ListTasksRequest, pb::ListTasksResponse>(ctx, in, out, "ListTasks", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  for (const auto& [field, value] : {std::pair{"comm_regex", &call->req.comm_regex()},
                                     std::pair{"title_regex", &call->req.title_regex()}})
    if (auto e = api::check_string(field, *value, 1024)) {
      call->finish(invalid(*e));
      return reactor;
    }
  FieldError error;
  auto filter = task_filter(call->req.comm_regex(), call->req.title_regex(), call->req.tgid(),
                            call->req.matched_only(), &error);
  if (!filter) {
    call->finish(invalid(error));
    return reactor;
  }
  submit(engine_, call, [](Engine&) { return false; },
         [call, f = *filter](Engine& e) {
           for (const auto& row : e.list_tasks(f)) {
             auto* o = call->resp.add_tasks();
             *o = api::to_proto(row.task, row.pod_uid);
             o->set_policy(row.policy);
             o->set_role(row.role);
             o->set_strategy(row.strategy);
             o->set_execution_class(row.execution_class);
             for (const auto& l : row.outranked) o->add_outranked(l);
             o->set_applied(row.applied);
           }
         });
  return reactor;
}

grpc::ServerUnaryReactor* Service::ListPolicies(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::ListPoliciesRequest, pb::ListPoliciesResponse>(ctx, in, out, "ListPolicies", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  submit(engine_, call, [](Engine&) { return false; },
         [call](Engine& e) {
           for (const auto& p : e.list_policies()) *call->resp.add_policies() = api::to_proto(p);
           for (const auto& [name, reason] : e.node_policies_not_selected()) {
             auto* n = call->resp.add_node_not_selected();
             n->set_name(name);
             n->set_reason(reason);
           }
         });
  return reactor;
}

grpc::ServerUnaryReactor* Service::ListBindings(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::ListBindingsRequest, pb::ListBindingsResponse>(ctx, in, out, "ListBindings", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  submit(engine_, call, [](Engine&) { return false; },
         [call](Engine& e) {
           auto b = e.list_bindings();
           for (const auto& c : b.claims)
             for (auto& x : api::bindings_from_claim(c)) *call->resp.add_bindings() = std::move(x);
           for (const auto& p : b.pods) *call->resp.add_pods() = api::to_proto(p);
         });
  return reactor;
}

grpc::Status Service::StreamedWatch(grpc::ServerContext* ctx,
                                    grpc::ServerSplitStreamer<pb::WatchRequest, pb::ChangeEvent>* w) {
  pb::WatchRequest req;
  if (!w->Read(&req)) {
    metrics_.rpc("Watch", "INVALID_ARGUMENT");
    return invalid("request", std::string("not a valid ") + pb::WatchRequest::descriptor()->full_name() +
                                  " message (malformed protobuf or invalid UTF-8 in a string)");
  }
  auto watcher = engine_.watch();
  // Subscribed: say so at once (initial metadata), so a client that lists after this (claim2core
  // get -w) misses no change between its listing and the first event.
  w->SendInitialMetadata();
  node::ChangeNote ev;
  while (!ctx->IsCancelled() && !stopping_) {
    switch (watcher->next(&ev, std::chrono::milliseconds(200))) {
      case Watcher::Next::Event:
        if (!w->Write(api::to_proto(ev))) {
          metrics_.rpc("Watch", "CANCELLED");
          return grpc::Status::CANCELLED;
        }
        break;
      case Watcher::Next::Timeout: break;
      case Watcher::Next::Dropped:
        metrics_.rpc("Watch", "RESOURCE_EXHAUSTED");
        return grpc::Status(grpc::RESOURCE_EXHAUSTED,
                            "watch: this client fell more than " + std::to_string(watcher->capacity()) +
                                " changes behind and was dropped; list again, then watch again");
      case Watcher::Next::Closed:
        metrics_.rpc("Watch", "UNAVAILABLE");
        return grpc::Status(grpc::UNAVAILABLE, "claim2cored is shutting down");
    }
  }
  metrics_.rpc("Watch", stopping_ ? "UNAVAILABLE" : "CANCELLED");
  return stopping_ ? grpc::Status(grpc::UNAVAILABLE, "claim2cored is shutting down") : grpc::Status::CANCELLED;
}

// The observer's Node labels (issue #14). Authorised as every RPC on the socket is (the peer's uid,
// peer_auth.hpp); the labels are checked by the core (Kubernetes label syntax, field "labels[k]").
grpc::ServerUnaryReactor* Service::SetNodeLabels(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::SetNodeLabelsRequest, pb::SetNodeLabelsResponse>(ctx, in, out, "SetNodeLabels", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  if (call->req.labels().size() > api::kMaxListItems) {
    call->finish(invalid("labels", "more than " + std::to_string(api::kMaxListItems) + " labels"));
    return reactor;
  }
  NodeLabelMap labels(call->req.labels().begin(), call->req.labels().end());
  submit(
      engine_, call,
      [call, labels](Engine& e) {
        // Changed labels are logged with the batch (a restart selects the same node policies
        // before the feed reconnects, INV-7); before, the record was dropped unless another
        // durable change shared the batch.
        return answer_write(*call, e.set_node_labels(labels));
      },
      [call](Engine& e) {
        call->resp.set_node_generation(e.reported_generation());
        auto effective = e.node_labels();
        call->resp.mutable_effective_labels()->insert(effective.begin(), effective.end());
      });
  return reactor;
}

}  // namespace c2c::daemon

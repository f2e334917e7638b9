#include "daemon/service.hpp"

#include <re2/re2.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>

#include "api/convert.hpp"
#include "host/cgroup.hpp"

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
  auto conv = api::from_proto(call.req.policy(), "policy");
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

void to_proto(const Intent& in, pb::Intent* p) {
  p->set_kind(api::to_proto(in.kind));
  p->set_policy(in.policy);
  p->set_policy_generation(in.generation);
  p->set_node(in.node);
  p->set_state(static_cast<pb::IntentState>(in.state));
  p->set_reason(in.reason);
  p->set_matched_tasks(in.matched_tasks);
  p->set_applied_entries(in.applied_entries);
  for (const auto& w : in.warnings) p->add_warnings(w);
  p->set_updated_unix_ms(in.updated_unix_ms);
}

// A core refusal of a policy, in proto field names ("policy.node.command_regex").
grpc::Status policy_refusal(PolicyKind kind, const ApplyResult& r) {
  std::string f = r.field.rfind("policy.", 0) == 0 ? r.field.substr(7) : r.field;
  return invalid(std::string("policy.") + (kind == PolicyKind::Dra ? "dra." : "node.") + api::proto_field_of(f),
                 r.message);
}

std::optional<AnyPolicy> stored_policy(const Core& core, PolicyKind kind, const std::string& name) {
  if (kind == PolicyKind::Dra) {
    if (auto p = core.dra_policy(name)) return AnyPolicy{*p};
  } else if (auto p = core.node_policy(name)) {
    return AnyPolicy{*p};
  }
  return std::nullopt;
}

Event upsert_event(const AnyPolicy& p) {
  if (const auto* d = std::get_if<DraExecutionPolicy>(&p)) return DraPolicyUpsert{*d};
  return NodePolicyUpsert{std::get<NodeSchedulingPolicy>(p)};
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
  PolicyKind kind = api::kind_of(policy);
  std::string name = api::name_of(policy);
  submit(
      engine_, call,
      [call, policy, kind, name](Engine& e) {
        auto r = e.apply(upsert_event(policy));
        if (r.status == ApplyResult::Status::Invalid) {
          call->status = policy_refusal(kind, r);
          return false;
        }
        for (const auto& w : r.warnings) call->resp.add_warnings(w);
        if (r.status == ApplyResult::Status::Ignored) {
          call->resp.set_ignored(true);
          call->resp.set_message(r.message);
          return false;
        }
        auto stored = stored_policy(e.core(), kind, name);
        if (!stored) return false;
        e.durable().put_policy(*stored);
        e.intents().accepted(kind, name, api::generation_of(*stored), e.node_name(), r.warnings, e.now_unix_ms());
        return true;
      },
      [call, kind, name](Engine& e) {
        if (auto stored = stored_policy(e.core(), kind, name))
          call->resp.set_policy_generation(api::generation_of(*stored));
        call->resp.set_node_generation(e.reported_generation());
        if (const auto* intent = e.intents().find(kind, name)) to_proto(*intent, call->resp.mutable_intent());
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
  PolicyDelete del{*kind.value, call->req.name(), call->req.generation()};
  submit(
      engine_, call,
      [call, del](Engine& e) {
        auto live = stored_policy(e.core(), del.kind, del.name);
        auto r = e.apply(del);
        if (r.status == ApplyResult::Status::Invalid) {
          call->status = invalid(r.field, r.message);
          return false;
        }
        if (r.status == ApplyResult::Status::Ignored || !live) {
          call->resp.set_ignored(true);
          call->resp.set_message(r.message.empty() ? "no such policy" : r.message);
          return false;
        }
        e.durable().delete_policy(del.kind, del.name, std::max(del.generation, api::generation_of(*live)));
        e.intents().removed(del.kind, del.name);
        return true;
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
  // Index of the first binding of each claim, to name fields of core refusals.
  std::map<std::string, int> first_binding;
  for (int i = 0; i < call->req.bindings_size(); ++i) first_binding.emplace(call->req.bindings(i).claim_uid(), i);
  auto given_pods = pods;
  submit(
      engine_, call,
      [call, claims = *claims.value, given_pods, first_binding](Engine& e) {
        // All or nothing: try the whole request on a copy of the core, keep it only if every
        // event is accepted (the copy then becomes the core).
        Core trial = e.core();
        std::vector<std::string> warnings;
        bool changed = false;
        for (size_t i = 0; i < claims.size(); ++i) {
          const Claim& c = claims[i];
          Event ev = trial.claim(c.uid) ? Event{ClaimUpdated{c}} : Event{ClaimAllocated{c}};
          auto r = trial.apply(ev);
          if (r.status == ApplyResult::Status::Invalid) {
            call->status = invalid(
                "bindings[" + std::to_string(first_binding.at(c.uid)) + "]." + api::binding_field_of(r.field), r.message);
            return false;
          }
          if (r.status == ApplyResult::Status::Ignored) warnings.push_back("claim " + c.uid + ": " + r.message);
          changed |= r.status == ApplyResult::Status::Applied;
        }
        std::vector<Pod> resolved;
        for (const auto& p : given_pods) resolved.push_back(e.resolve_pod(p, &warnings));
        for (size_t i = 0; i < resolved.size(); ++i) {
          auto r = trial.apply(PodBound{resolved[i]});
          if (r.status == ApplyResult::Status::Invalid) {
            std::string f = r.field.rfind("pod.", 0) == 0 ? r.field.substr(4) : r.field;
            call->status = invalid("pods[" + std::to_string(i) + "]." + f, r.message);
            return false;
          }
          changed |= r.status == ApplyResult::Status::Applied;
        }
        // Accepted: replay on the real core (same results: the core is deterministic) so that the
        // changes are recorded for Watch.
        for (const auto& c : claims) {
          Event ev = e.core().claim(c.uid) ? Event{ClaimUpdated{c}} : Event{ClaimAllocated{c}};
          if (e.apply(ev).status == ApplyResult::Status::Applied) e.durable().put_claim(c);
        }
        for (size_t i = 0; i < resolved.size(); ++i)
          if (e.apply(PodBound{resolved[i]}).status != ApplyResult::Status::Invalid) e.durable().put_pod(given_pods[i]);
        for (const auto& w : warnings) call->resp.add_warnings(w);
        if (!changed) {
          call->resp.set_ignored(true);
          call->resp.set_message("nothing changed (same or older claim generations: INV-3)");
        }
        return changed;
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
  ClaimDeallocated ev{call->req.claim_uid(), call->req.claim_generation()};
  submit(
      engine_, call,
      [call, ev](Engine& e) {
        auto live = e.core().claim(ev.uid);
        auto r = e.apply(ev);
        if (r.status == ApplyResult::Status::Invalid) {
          call->status = invalid(r.field == "uid" ? "claim_uid" : r.field == "generation" ? "claim_generation" : r.field,
                                 r.message);
          return false;
        }
        if (r.status == ApplyResult::Status::Ignored || !live) {
          call->resp.set_ignored(true);
          return false;
        }
        e.durable().delete_claim(ev.uid, std::max(ev.generation, live->generation));
        // Pods that no live claim reserves any more are forgotten with it.
        std::set<std::string> reserved;
        for (const auto& c : e.durable().claims) reserved.insert(c.reserved_for.begin(), c.reserved_for.end());
        std::vector<std::string> gone;
        for (const auto& p : e.durable().pods)
          if (!reserved.count(p.uid)) gone.push_back(p.uid);
        for (const auto& uid : gone) {
          e.apply(PodRemoved{uid});
          e.durable().delete_pod(uid);
        }
        return true;
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
  AnyPolicy policy = *parsed;
  bool ack = call->req.acknowledge();
  submit(
      engine_, call,
      [call, policy, ack](Engine& e) {
        PreviewResult r = std::visit([&](const auto& p) { return e.core().preview(p); }, policy);
        PolicyKind kind = api::kind_of(policy);
        if (!r.invalid_field.empty()) {
          std::string f = r.invalid_field.rfind("policy.", 0) == 0 ? r.invalid_field.substr(7) : r.invalid_field;
          call->status = invalid(std::string("policy.") + (kind == PolicyKind::Dra ? "dra." : "node.") +
                                     api::proto_field_of(f),
                                 r.invalid_message);
          return false;
        }
        call->resp = api::to_proto(r);
        call->resp.set_node_generation(e.reported_generation());  // never above the durable ceiling
        if (!ack) return false;
        auto a = e.apply(PreviewAck{kind, r.policy, r.policy_generation});
        if (a.status == ApplyResult::Status::Invalid) {
          call->status = invalid("acknowledge", a.field + ": " + a.message);
          return false;
        }
        if (a.status == ApplyResult::Status::Ignored) {  // e.g. node policies need no preview
          call->resp.add_warnings("acknowledge ignored: " + a.message);
          return false;
        }
        e.durable().preview_acks[{kind, r.policy}] = r.policy_generation;
        call->resp.set_acknowledged(true);
        // This call acknowledged it: the core's "goes live after a preview ... is acknowledged"
        // warning no longer applies.
        auto* w = call->resp.mutable_warnings();
        w->erase(std::remove_if(w->begin(), w->end(),
                                [](const std::string& s) { return s.rfind("requirePreview:", 0) == 0; }),
                 w->end());
        return true;
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
           for (const auto& intent : e.intents().list(call->req.policy(), kind)) to_proto(intent, call->resp.add_intents());
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
           if (auto l = e.core().explain(call->req.tid())) {
             call->resp.set_found(true);
             *call->resp.mutable_lineage() = api::to_proto(*l);
           }
         });
  return reactor;
}

grpc::ServerUnaryReactor* Service::Status(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::StatusRequest, pb::StatusResponse>(ctx, in, out, "Status", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  submit(engine_, call, [](Engine&) { return false; }, [call](Engine& e) { e.fill_status(&call->resp); });
  return reactor;
}

grpc::ServerUnaryReactor* Service::ListTasks(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::ListTasksRequest, pb::ListTasksResponse>(ctx, in, out, "ListTasks", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  std::shared_ptr<RE2> re;
  if (!call->req.comm_regex().empty()) {
    if (auto e = api::check_string("comm_regex", call->req.comm_regex(), 1024)) {
      call->finish(invalid(*e));
      return reactor;
    }
    RE2::Options opts;
    opts.set_log_errors(false);
    re = std::make_shared<RE2>(call->req.comm_regex(), opts);
    if (!re->ok()) {
      call->finish(invalid("comm_regex", "invalid RE2 regex: " + re->error()));
      return reactor;
    }
  }
  submit(engine_, call, [](Engine&) { return false; },
         [call, re](Engine& e) {
           for (const auto& t : e.core().tasks()) {
             if (re && !RE2::PartialMatch(t.comm, *re)) continue;
             auto pod = host::parse_pod_cgroup(t.cgroup);
             *call->resp.add_tasks() = api::to_proto(t, pod ? pod->pod_uid : std::string());
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
           for (const auto& p : e.durable().policies) *call->resp.add_policies() = api::to_proto(p);
         });
  return reactor;
}

grpc::ServerUnaryReactor* Service::ListBindings(Ctx* ctx, const Buf* in, Buf* out) {
  auto call = begin<pb::ListBindingsRequest, pb::ListBindingsResponse>(ctx, in, out, "ListBindings", max_bytes_, metrics_);
  if (call->done) return call->reactor;
  auto* reactor = call->reactor;
  submit(engine_, call, [](Engine&) { return false; },
         [call](Engine& e) {
           for (const auto& c : e.durable().claims)
             for (auto& b : api::bindings_from_claim(c)) *call->resp.add_bindings() = std::move(b);
           for (const auto& p : e.durable().pods) *call->resp.add_pods() = api::to_proto(p);
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
  pb::ChangeEvent ev;
  while (!ctx->IsCancelled() && !stopping_) {
    switch (watcher->next(&ev, std::chrono::milliseconds(200))) {
      case Watcher::Next::Event:
        if (!w->Write(ev)) {
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

}  // namespace c2c::daemon

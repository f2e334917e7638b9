#include "daemon/durable/durable_state.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/fnv.hpp"
#include "host/durable_file.hpp"
#include "codec/trace_codec.hpp"
#include "codec/json_reader.hpp"
#include "codec/policy_codec.hpp"

namespace c2c::daemon {
namespace {

using nlohmann::json;
constexpr const char* kFormat = "claim2core-daemon-state";
constexpr int kVersion = 1;

std::string checksum_hex(const std::string& text) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a64(text)));
  return buf;
}

PolicyId id_of(const AnyPolicy& p) { return policy_id(p); }

json encode_any(const AnyPolicy& p) {
  return std::visit([](const auto& x) { return codec::encode_policy(x); }, p);
}

const char* kind_name(PolicyKind k) { return to_string(k); }

std::optional<PolicyKind> kind_from(const std::string& s) { return codec::policy_kind_from_string(s); }

json encode_intent(const Intent& i) {
  return json{{"kind", kind_name(i.kind)}, {"policy", i.policy},       {"generation", i.generation},
              {"node", i.node},            {"state", to_string(i.state)}, {"reason", i.reason},
              {"matchedTasks", i.matched_tasks}, {"appliedEntries", i.applied_entries},
              {"warnings", i.warnings},    {"updatedUnixMs", i.updated_unix_ms}};
}

Intent decode_intent(const codec::Reader& r) {
  r.only({"kind", "policy", "generation", "node", "state", "reason", "matchedTasks", "appliedEntries", "warnings",
          "updatedUnixMs"});
  Intent i;
  auto k = kind_from(r.str("kind"));
  if (!k) r.fail("kind", "must be DRAExecutionPolicy or NodeSchedulingPolicy");
  i.kind = *k;
  i.policy = r.str("policy");
  i.generation = r.i64("generation");
  i.node = r.str_or("node", "");
  auto st = intent_state_from_string(r.str("state"));
  if (!st) r.fail("state", "must be PENDING, SENT, APPLIED or FAILED");
  i.state = *st;
  i.reason = r.str_or("reason", "");
  i.matched_tasks = r.u32("matchedTasks");
  i.applied_entries = r.u32("appliedEntries");
  i.warnings = r.strings("warnings");
  i.updated_unix_ms = r.i64_or("updatedUnixMs", 0);
  return i;
}

// A registered role: the task_role_set event's fields, checked by the core's validation.
json encode_role(const TaskRoleSet& r) { return {{"tid", r.key.tid}, {"start", r.key.start}, {"role", r.role}}; }

TaskRoleSet decode_role(const codec::Reader& x) {
  x.only({"tid", "start", "role"});
  TaskRoleSet r{{x.u32("tid"), x.u64("start")}, x.str_or("role", "")};
  if (auto bad = c2c::validate(Event{r})) x.fail(bad->field.c_str(), bad->message);
  return r;
}

// The Node object's labels, in the Kubernetes label syntax the core checks (node_labels event).
std::map<std::string, std::string> decode_node_labels(const codec::Reader& x, const char* key) {
  auto labels = x.string_map(key);
  if (auto bad = c2c::validate(Event{NodeLabels{labels}})) x.fail(key, bad->field + ": " + bad->message);
  return labels;
}

// The inner object of an event encoded by the trace codec (e.g. "claim" of claim_allocated).
template <class E>
json encode_inner(const E& e, const char* member) {
  json j = codec::encode_event(Event{e});
  return j.at(member);
}

// Decodes with the trace codec and renames its field paths ("claim.devices[0]") to the file's
// ("state.claims[3].devices[0]").
Event decode_inner(const json& event, const std::string& member, const std::string& path) {
  try {
    return codec::decode_event(event);
  } catch (const codec::DecodeError& e) {
    std::string f = e.field;
    if (f.rfind(member, 0) == 0) f = path + f.substr(member.size());
    throw codec::DecodeError(f, e.what());
  }
}

}  // namespace

PolicyId policy_id(const AnyPolicy& p) {
  return std::visit([](const auto& x) {
    using T = std::decay_t<decltype(x)>;
    return PolicyId{std::is_same_v<T, DraExecutionPolicy> ? PolicyKind::Dra : PolicyKind::Node, x.name};
  }, p);
}

int64_t policy_generation(const AnyPolicy& p) {
  return std::visit([](const auto& x) { return x.generation; }, p);
}

void DurableState::put_policy(const AnyPolicy& p) {
  auto id = id_of(p);
  auto it = std::lower_bound(policies.begin(), policies.end(), id,
                             [](const AnyPolicy& a, const PolicyId& b) { return id_of(a) < b; });
  if (it != policies.end() && id_of(*it) == id)
    *it = p;
  else
    policies.insert(it, p);
  policy_tombstones.erase(std::remove_if(policy_tombstones.begin(), policy_tombstones.end(),
                                         [&](const PolicyTombstone& t) { return id_of(t.last) == id; }),
                          policy_tombstones.end());
}

void DurableState::delete_policy(PolicyKind kind, const std::string& name, int64_t generation) {
  PolicyId id{kind, name};
  auto it = std::find_if(policies.begin(), policies.end(), [&](const AnyPolicy& a) { return id_of(a) == id; });
  if (it == policies.end()) return;
  policy_tombstones.push_back(PolicyTombstone{*it, generation});
  policies.erase(it);
  preview_acks.erase(id);
  intents.erase(std::remove_if(intents.begin(), intents.end(),
                               [&](const Intent& i) { return i.kind == kind && i.policy == name; }),
                intents.end());
}

void DurableState::put_claim(const Claim& c) {
  auto it = std::lower_bound(claims.begin(), claims.end(), c.uid,
                             [](const Claim& a, const std::string& b) { return a.uid < b; });
  if (it != claims.end() && it->uid == c.uid)
    *it = c;
  else
    claims.insert(it, c);
  std::erase_if(claim_tombstones, [&](const ClaimTombstone& t) { return t.uid == c.uid; });
}

void DurableState::delete_claim(const std::string& uid, int64_t generation) {
  claims.erase(std::remove_if(claims.begin(), claims.end(), [&](const Claim& c) { return c.uid == uid; }),
               claims.end());
  std::erase_if(claim_tombstones, [&](const ClaimTombstone& t) { return t.uid == uid; });
  claim_tombstones.push_back(ClaimTombstone{uid, generation});
  if (claim_tombstones.size() > kMaxClaimTombstones)
    claim_tombstones.erase(claim_tombstones.begin(),
                           claim_tombstones.begin() + static_cast<std::ptrdiff_t>(claim_tombstones.size() - kMaxClaimTombstones));
}

void DurableState::put_pod(const Pod& p) {
  auto it = std::lower_bound(pods.begin(), pods.end(), p.uid, [](const Pod& a, const std::string& b) { return a.uid < b; });
  if (it != pods.end() && it->uid == p.uid)
    *it = p;
  else
    pods.insert(it, p);
}

void DurableState::delete_pod(const std::string& uid) {
  pods.erase(std::remove_if(pods.begin(), pods.end(), [&](const Pod& p) { return p.uid == uid; }), pods.end());
}

void DurableState::put_role(const TaskRoleSet& r) {
  auto it = std::lower_bound(roles.begin(), roles.end(), r.key.tid,
                             [](const TaskRoleSet& a, uint32_t tid) { return a.key.tid < tid; });
  const bool found = it != roles.end() && it->key.tid == r.key.tid;
  if (r.role.empty()) {
    if (found) roles.erase(it);
  } else if (found) {
    *it = r;
  } else {
    roles.insert(it, r);
  }
}

void DurableState::delete_role(uint32_t tid) { put_role(TaskRoleSet{{tid, 0}, ""}); }

const TaskRoleSet* DurableState::role(uint32_t tid) const {
  auto it = std::lower_bound(roles.begin(), roles.end(), tid,
                             [](const TaskRoleSet& a, uint32_t t) { return a.key.tid < t; });
  return it != roles.end() && it->key.tid == tid ? &*it : nullptr;
}

void apply_change(DurableState& s, const StateChange& c) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, PutPolicy>) s.put_policy(x.policy);
        else if constexpr (std::is_same_v<T, DeletePolicy>) s.delete_policy(x.kind, x.name, x.generation);
        else if constexpr (std::is_same_v<T, PutClaim>) s.put_claim(x.claim);
        else if constexpr (std::is_same_v<T, DeleteClaim>) s.delete_claim(x.uid, x.generation);
        else if constexpr (std::is_same_v<T, PutPod>) s.put_pod(x.pod);
        else if constexpr (std::is_same_v<T, DeletePod>) s.delete_pod(x.uid);
        else if constexpr (std::is_same_v<T, AckPreview>) s.preview_acks[{x.kind, x.name}] = x.generation;
        else if constexpr (std::is_same_v<T, PutRole>) s.put_role(x.role);
        else if constexpr (std::is_same_v<T, PutNodeLabels>) s.node_object_labels = x.labels;
        else {
          auto key = [](const Intent& i) { return std::make_pair(i.kind, std::cref(i.policy)); };
          auto it = std::lower_bound(s.intents.begin(), s.intents.end(), x.intent,
                                     [&](const Intent& a, const Intent& b) { return key(a) < key(b); });
          if (it != s.intents.end() && key(*it) == key(x.intent)) *it = x.intent;
          else s.intents.insert(it, x.intent);
        }
      },
      c);
}

std::string encode_changes(uint64_t seq, const std::vector<StateChange>& changes) {
  json list = json::array();
  for (const auto& c : changes)
    list.push_back(std::visit(
        [](const auto& x) -> json {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, PutPolicy>) return {{"putPolicy", encode_any(x.policy)}};
          else if constexpr (std::is_same_v<T, DeletePolicy>)
            return {{"deletePolicy", {{"kind", kind_name(x.kind)}, {"name", x.name}, {"generation", x.generation}}}};
          else if constexpr (std::is_same_v<T, PutClaim>) return {{"putClaim", encode_inner(ClaimAllocated{x.claim}, "claim")}};
          else if constexpr (std::is_same_v<T, DeleteClaim>)
            return {{"deleteClaim", {{"uid", x.uid}, {"generation", x.generation}}}};
          else if constexpr (std::is_same_v<T, PutPod>) return {{"putPod", encode_inner(PodBound{x.pod}, "pod")}};
          else if constexpr (std::is_same_v<T, DeletePod>) return {{"deletePod", {{"uid", x.uid}}}};
          else if constexpr (std::is_same_v<T, AckPreview>)
            return {{"previewAck", {{"kind", kind_name(x.kind)}, {"name", x.name}, {"generation", x.generation}}}};
          else if constexpr (std::is_same_v<T, PutRole>) return {{"putRole", encode_role(x.role)}};
          else if constexpr (std::is_same_v<T, PutNodeLabels>) return {{"putNodeLabels", {{"labels", x.labels}}}};
          else return {{"putIntent", encode_intent(x.intent)}};
        },
        c));
  return json{{"seq", seq}, {"changes", std::move(list)}}.dump();
}

bool decode_changes(const std::string& text, uint64_t* seq, std::vector<StateChange>* out, FieldError* err) {
  try {
    json doc = codec::parse_json_strict(text);
    codec::Reader top(doc, "");
    top.only({"seq", "changes"});
    std::vector<StateChange> changes;
    for (const auto& c : top.array("changes")) {
      auto policy_kind = [](const codec::Reader& r) {
        auto k = kind_from(r.str("kind"));
        if (!k) r.fail("kind", "must be DRAExecutionPolicy or NodeSchedulingPolicy");
        return *k;
      };
      if (!c.raw().is_object() || c.raw().size() != 1) c.fail("", "must be an object with one change");
      const std::string op = c.raw().begin().key();
      auto x = c.child(op.c_str());
      if (op == "putPolicy") {
        auto any = codec::decode_policy(x.raw(), x.path());
        changes.push_back(PutPolicy{std::visit([](auto&& p) -> AnyPolicy { return p; }, any)});
      } else if (op == "deletePolicy") {
        x.only({"kind", "name", "generation"});
        changes.push_back(DeletePolicy{policy_kind(x), x.str("name"), x.i64("generation")});
      } else if (op == "putClaim") {
        auto e = decode_inner(json{{"v", codec::kTraceVersion}, {"kind", "claim_allocated"}, {"claim", x.raw()}},
                              "claim", x.path());
        changes.push_back(PutClaim{std::get<ClaimAllocated>(e).claim});
      } else if (op == "deleteClaim") {
        x.only({"uid", "generation"});
        changes.push_back(DeleteClaim{x.str("uid"), x.i64("generation")});
      } else if (op == "putPod") {
        auto e = decode_inner(json{{"v", codec::kTraceVersion}, {"kind", "pod_bound"}, {"pod", x.raw()}}, "pod", x.path());
        changes.push_back(PutPod{std::get<PodBound>(e).pod});
      } else if (op == "deletePod") {
        x.only({"uid"});
        changes.push_back(DeletePod{x.str("uid")});
      } else if (op == "previewAck") {
        x.only({"kind", "name", "generation"});
        changes.push_back(AckPreview{policy_kind(x), x.str("name"), x.i64("generation")});
      } else if (op == "putRole") {
        changes.push_back(PutRole{decode_role(x)});
      } else if (op == "putNodeLabels") {
        x.only({"labels"});
        changes.push_back(PutNodeLabels{decode_node_labels(x, "labels")});
      } else if (op == "putIntent") {
        changes.push_back(PutIntent{decode_intent(x)});
      } else {
        c.fail(op.c_str(), "unknown change");
      }
    }
    *seq = top.u64("seq");
    *out = std::move(changes);
    return true;
  } catch (const codec::DecodeError& e) {
    *err = FieldError{e.field, e.what()};
    return false;
  } catch (const json::exception& e) {
    *err = FieldError{"record", e.what()};
    return false;
  }
}

std::string encode_state(const DurableState& s) {
  json state;
  state["policies"] = json::array();
  for (const auto& p : s.policies) state["policies"].push_back(encode_any(p));
  state["previewAcks"] = json::array();
  for (const auto& [id, g] : s.preview_acks)
    state["previewAcks"].push_back({{"kind", kind_name(id.first)}, {"name", id.second}, {"generation", g}});
  state["policyTombstones"] = json::array();
  for (const auto& t : s.policy_tombstones)
    state["policyTombstones"].push_back({{"policy", encode_any(t.last)}, {"deletedGeneration", t.deleted_generation}});
  state["claims"] = json::array();
  for (const auto& c : s.claims) state["claims"].push_back(encode_inner(ClaimAllocated{c}, "claim"));
  state["claimTombstones"] = json::array();
  for (const auto& t : s.claim_tombstones)
    state["claimTombstones"].push_back({{"uid", t.uid}, {"generation", t.generation}});
  state["pods"] = json::array();
  for (const auto& p : s.pods) state["pods"].push_back(encode_inner(PodBound{p}, "pod"));
  state["intents"] = json::array();
  for (const auto& i : s.intents) state["intents"].push_back(encode_intent(i));
  if (!s.roles.empty()) {  // absent when empty: files stay as they were for hosts without roles
    state["roles"] = json::array();
    for (const auto& r : s.roles) state["roles"].push_back(encode_role(r));
  }
  if (s.node_object_labels) state["nodeObjectLabels"] = *s.node_object_labels;  // absent: never sent
  state["logSeq"] = s.log_seq;
  const std::string body = state.dump();
  json doc{{"format", kFormat}, {"version", kVersion}, {"state", state}, {"checksum", checksum_hex(body)}};
  return doc.dump() + "\n";
}

bool decode_state(const std::string& text, DurableState* out, FieldError* err) {
  // The writer ends the document with one newline and nothing else. The JSON reader stops at a NUL
  // byte as at the end of its input, so a file padded with zeros (a torn write, a crash of a file
  // system that extends before it writes) would read as whole: every byte must be the writer's.
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    *err = FieldError{"file", "a NUL byte at offset " + std::to_string(nul) + " of " + std::to_string(text.size()) +
                                  " bytes: not written by claim2cored (damaged or padded file)"};
    return false;
  }
  json doc;
  try {
    doc = codec::parse_json_strict(text);
  } catch (const codec::DecodeError& e) {  // a duplicate key: the file was not written by us
    *err = FieldError{e.field, e.what()};
    return false;
  } catch (const json::exception& e) {  // parse_error, and out_of_range 406 for 1e999
    *err = FieldError{"state", std::string("not JSON (truncated or corrupt file?): ") + e.what()};
    return false;
  }
  // The reader accepts whitespace after the document; the writer leaves one newline.
  const size_t last = text.find_last_of('}');
  if (last != std::string::npos && last + 1 != text.size() && text.compare(last + 1, std::string::npos, "\n") != 0) {
    *err = FieldError{"file", std::to_string(text.size() - last - 1) + " bytes after the document (offset " +
                                  std::to_string(last + 1) + "): not written by claim2cored (damaged file)"};
    return false;
  }
  try {
    codec::Reader top(doc, "");
    top.only({"format", "version", "state", "checksum"});
    if (top.str("format") != kFormat) top.fail("format", std::string("must be '") + kFormat + "'");
    if (top.i64("version") != kVersion) top.fail("version", "unsupported version (this build reads 1)");
    if (!doc.contains("state") || !doc["state"].is_object()) top.fail("state", "missing or not an object");
    if (checksum_hex(doc["state"].dump()) != top.str("checksum"))
      top.fail("checksum", "does not match the state (the file was changed or damaged)");
    codec::Reader r(doc["state"], "state");
    r.only({"policies", "previewAcks", "policyTombstones", "claims", "claimTombstones", "pods", "intents", "logSeq",
            "roles", "nodeObjectLabels"});
    DurableState s;
    s.log_seq = r.u64_or("logSeq", 0);  // files written before the state log have none
    for (const auto& p : r.array("policies")) {
      auto any = codec::decode_policy(p.raw(), p.path());
      s.policies.push_back(std::visit([](auto&& x) -> AnyPolicy { return x; }, any));
    }
    for (const auto& a : r.array("previewAcks")) {
      a.only({"kind", "name", "generation"});
      auto k = kind_from(a.str("kind"));
      if (!k) a.fail("kind", "must be DRAExecutionPolicy or NodeSchedulingPolicy");
      s.preview_acks[{*k, a.str("name")}] = a.i64("generation");
    }
    for (const auto& t : r.array("policyTombstones")) {
      t.only({"policy", "deletedGeneration"});
      auto c = t.child("policy");
      auto any = codec::decode_policy(c.raw(), c.path());
      s.policy_tombstones.push_back(
          PolicyTombstone{std::visit([](auto&& x) -> AnyPolicy { return x; }, any), t.i64("deletedGeneration")});
    }
    for (const auto& c : r.array("claims")) {
      auto e = decode_inner(json{{"v", codec::kTraceVersion}, {"kind", "claim_allocated"}, {"claim", c.raw()}},
                            "claim", c.path());
      s.claims.push_back(std::get<ClaimAllocated>(e).claim);
    }
    auto tombstones = r.array("claimTombstones");
    if (tombstones.size() > kMaxClaimTombstones)
      r.fail("claimTombstones", "more than " + std::to_string(kMaxClaimTombstones) + " entries");
    for (const auto& t : tombstones) {
      t.only({"uid", "generation"});
      s.claim_tombstones.push_back(ClaimTombstone{t.str("uid"), t.i64("generation")});
    }
    for (const auto& p : r.array("pods")) {
      auto e = decode_inner(json{{"v", codec::kTraceVersion}, {"kind", "pod_bound"}, {"pod", p.raw()}}, "pod", p.path());
      s.pods.push_back(std::get<PodBound>(e).pod);
    }
    for (const auto& i : r.array("intents")) s.intents.push_back(decode_intent(i));
    if (r.has("roles"))
      for (const auto& x : r.array("roles")) s.put_role(decode_role(x));
    if (r.has("nodeObjectLabels")) s.node_object_labels = decode_node_labels(r, "nodeObjectLabels");
    *out = std::move(s);
    return true;
  } catch (const codec::DecodeError& e) {
    *err = FieldError{e.field, e.what()};
    return false;
  } catch (const json::exception& e) {
    *err = FieldError{"state", e.what()};
    return false;
  }
}

bool load_state(const std::string& path, DurableState* out, FieldError* err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) {
      *out = DurableState{};
      return true;
    }
    *err = FieldError{path, std::string("cannot read: ") + std::strerror(errno)};
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  FieldError e;
  if (!decode_state(ss.str(), out, &e)) {
    *err = FieldError{path + ": " + e.field, e.message};
    return false;
  }
  return true;
}

std::string save_state(const std::string& path, const DurableState& s) {
  return host::write_file_durably(path, encode_state(s));
}

std::vector<Event> restore_events(const DurableState& s) {
  std::vector<Event> ev;
  auto upsert = [](const AnyPolicy& p) -> Event {
    if (const auto* d = std::get_if<DraExecutionPolicy>(&p)) return DraPolicyUpsert{*d};
    return NodePolicyUpsert{std::get<NodeSchedulingPolicy>(p)};
  };
  for (const auto& t : s.policy_tombstones) {
    auto id = id_of(t.last);
    ev.push_back(upsert(t.last));
    ev.push_back(PolicyDelete{id.first, id.second, t.deleted_generation});
  }
  for (const auto& p : s.policies) ev.push_back(upsert(p));
  for (const auto& [id, g] : s.preview_acks) ev.push_back(PreviewAck{id.first, id.second, g});
  for (const auto& t : s.claim_tombstones) {
    Claim c;
    c.uid = t.uid;
    c.generation = t.generation;
    ev.push_back(ClaimAllocated{c});
    ev.push_back(ClaimDeallocated{t.uid, t.generation});
  }
  for (const auto& c : s.claims) ev.push_back(ClaimAllocated{c});
  for (const auto& p : s.pods) ev.push_back(PodBound{p});
  return ev;
}

}  // namespace c2c::daemon

#include "cli/daemon_commands.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <iostream>
#include <memory>

#include "client/connection.hpp"
#include "client/node_client.hpp"
#include "cli/decision_tables.hpp"
#include "cli/listing.hpp"
#include "cli/manifests.hpp"
#include "cli/structured_output.hpp"
#include "cli/tables.hpp"
#include "k8s/cluster_ack.hpp"

namespace c2c::cli {
namespace {

using nlohmann::json;
using client::ConnectionError;
using client::ConnectionOptions;
using client::kDefaultSocket;
using client::kSocketEnv;
using client::open_channel;
using client::target_of;

// Options every daemon verb takes (they follow the verb: `claim2core get intents -o json`).
struct Common {
  ConnectionOptions conn;
  std::string output = "table";
  int timeout_s = 10;
};

void add_common(CLI::App* cmd, Common& c, std::vector<std::string> formats = {"table", "json", "yaml"}) {
  cmd->add_option("--socket", c.conn.socket,
                  std::string("claim2cored's Unix socket (default $") + kSocketEnv + ", else " + kDefaultSocket + ")");
  cmd->add_option("--server", c.conn.server, "HOST:PORT of a daemon listening on TCP (mutual TLS only)");
  cmd->add_option("--cacert", c.conn.cacert, "PEM CA bundle that signed the daemon's certificate (with --server)");
  cmd->add_option("--cert", c.conn.cert, "PEM client certificate (with --server)");
  cmd->add_option("--key", c.conn.key, "PEM client key (with --server)");
  cmd->add_option("--tls-server-name", c.conn.tls_server_name, "Name to check in the daemon's certificate");
  cmd->add_option("--timeout", c.timeout_s, "Seconds to wait for each reply")->check(CLI::Range(1, 3600));
  if (!formats.empty()) {
    std::string names;
    for (const auto& f : formats) names += (names.empty() ? "" : "|") + f;
    cmd->add_option("-o,--output", c.output, "Output format: " + names)->check(CLI::IsMember(formats));
  }
}

// A failed RPC: the message on stderr, the exit status (2 when the daemon says the input is invalid).
struct RpcFailure {
  int exit_code;
};

// The verb's typed client (src/client/node_client.hpp): a failed call is said on stderr and
// becomes the verb's exit status.
class Session {
 public:
  Session(std::string verb, const Common& c) : verb_(std::move(verb)), common_(c) {
    try {
      ConnectionOptions o = c.conn;
      o.timeout = std::chrono::seconds(c.timeout_s);
      client_ = std::make_unique<client::NodeClient>(o);
    } catch (const ConnectionError& e) {
      std::cerr << "claim2core " << verb_ << ": " << e.what() << "\n";
      throw RpcFailure{kExitUsage};
    }
  }

  const client::NodeClient& node() const { return *client_; }

  // The reply, or (after saying why) throws RpcFailure.
  template <class T>
  T check(client::Result<T> r, const std::string& what) const {
    if (!r.ok()) fail(r.error(), what);
    return std::move(r.value());
  }
  void fail(const client::CallError& e, const std::string& what) const {
    std::cerr << "claim2core " << verb_ << ": " << what << ": " << e.code_name << ": " << e.message << "\n";
    if (e.unavailable())
      std::cerr << "  (is claim2cored running and listening on " << target_of(common_.conn) << "?)\n";
    throw RpcFailure{e.invalid_input() ? kExitUsage : kExitServer};
  }

 private:
  std::string verb_;
  const Common& common_;
  std::unique_ptr<client::NodeClient> client_;
};

void print_structured(OutputFormat f, const json& j) {
  if (f == OutputFormat::Json) std::cout << j.dump(2) << "\n";
  else std::cout << json_to_yaml(j);
}

// Runs a verb: local errors and RPC failures become exit codes, never exceptions out of CLI11.
template <class F>
std::function<void()> guarded(int& exit_code, F body) {
  return [&exit_code, body] {
    try {
      exit_code = body();
    } catch (const RpcFailure& f) {
      exit_code = f.exit_code;
    }
  };
}

// Every manifest is decoded before the first RPC, so one bad document means nothing is sent.
std::optional<std::vector<PolicyManifest>> load_or_report(const std::string& verb,
                                                          const std::vector<std::string>& files) {
  try {
    std::vector<PolicyManifest> all;
    for (const auto& f : files)
      for (auto& m : load_policy_manifests(f)) all.push_back(std::move(m));
    return all;
  } catch (const ManifestError& e) {  // names the file, the document and the field
    std::cerr << "claim2core " << verb << ": " << e.what() << "\n"
              << "  nothing was sent to the daemon\n";
    return std::nullopt;
  }
}

std::string pending_hint(const std::vector<std::string>& files) {
  std::string f;
  for (const auto& x : files) f += " -f " + x;
  return "  requirePreview: review and acknowledge the preview to let it go live:\n"
         "    claim2core preview" + f + " --acknowledge\n";
}

// ---- apply ---------------------------------------------------------------------------------------

// Preview's warnings for `policy` at the generation it was stored with, minus those in `already`.
std::vector<std::string> preview_warnings(Session& s, const c2c::AnyPolicy& policy, int64_t generation,
                                          const std::vector<std::string>& already) {
  c2c::AnyPolicy stored = policy;
  std::visit([&](auto& v) { v.generation = generation; }, stored);
  const reply::Preview resp = s.check(s.node().preview(stored), "Preview (" + ref_of(policy) + ")");
  std::vector<std::string> out;
  for (const auto& w : resp.warnings)
    if (std::find(already.begin(), already.end(), w) == already.end()) out.push_back(w);
  return out;
}

void add_apply(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("apply", "Create or update policies from manifests (YAML or JSON, multi-document)");
  auto c = std::make_shared<Common>();
  auto files = std::make_shared<std::vector<std::string>>();
  cmd->add_option("-f,--filename", *files, "Policy manifest file(s); - for standard input")->required();
  add_common(cmd, *c);
  cmd->callback(guarded(exit_code, [c, files]() -> int {
    auto manifests = load_or_report("apply", *files);
    if (!manifests) return kExitUsage;
    OutputFormat fmt = output_format_from_string(c->output);
    Session s("apply", *c);
    json results = json::array();
    int rc = kExitOk;
    bool pending_preview = false;
    for (const auto& m : *manifests) {
      const reply::Upsert resp = s.check(s.node().upsert_policy(m.policy), m.source + " (" + ref_of(m.policy) + ")");
      if (resp.intent && resp.intent->state == node::IntentState::Failed) rc = kExitServer;
      if (resp.intent && resp.intent->state == node::IntentState::Pending &&
          std::holds_alternative<DraExecutionPolicy>(m.policy) && std::get<DraExecutionPolicy>(m.policy).require_preview)
        pending_preview = true;
      // The warnings `preview` gives for what was just stored, from the daemon's Preview (one source
      // of truth: not worked out again here), beyond those the reply already carries.
      std::vector<std::string> more;
      // (Also for an unchanged policy: its warnings still hold.)
      if (resp.policy_generation > 0) more = preview_warnings(s, m.policy, resp.policy_generation, resp.warnings);
      if (fmt == OutputFormat::Table) {
        std::cout << render_upsert(ref_of(m.policy), resp);
        for (const auto& w : more) std::cout << "warning: " << w << "\n";
      } else {
        results.push_back({{"policy", ref_of(m.policy)}, {"source", m.source}, {"result", resp.json},
                           {"previewWarnings", more}});
      }
    }
    if (fmt != OutputFormat::Table) print_structured(fmt, results);
    if (pending_preview) std::cerr << pending_hint(*files);
    return rc;
  }));
}

// ---- delete --------------------------------------------------------------------------------------

std::optional<PolicyKind> parse_kind(std::string k) {
  for (auto& ch : k) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (k == "draexecutionpolicy" || k == "draexecutionpolicies" || k == "dra") return PolicyKind::Dra;
  if (k == "nodeschedulingpolicy" || k == "nodeschedulingpolicies" || k == "node") return PolicyKind::Node;
  return std::nullopt;
}

void add_delete(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("delete", "Delete policies: `delete KIND NAME` or `delete -f FILE` (exit 1 when nothing was deleted)");
  auto c = std::make_shared<Common>();
  auto files = std::make_shared<std::vector<std::string>>();
  auto args = std::make_shared<std::vector<std::string>>();
  auto generation = std::make_shared<int64_t>(0);
  cmd->add_option("kind_name", *args, "KIND NAME (KIND: DRAExecutionPolicy|NodeSchedulingPolicy, or dra|node)");
  cmd->add_option("-f,--filename", *files, "Delete the policies named in these manifests");
  cmd->add_option("--generation", *generation, "Delete only if this is the current generation (0: any)")
      ->check(CLI::NonNegativeNumber);
  add_common(cmd, *c);
  cmd->callback(guarded(exit_code, [c, files, args, generation]() -> int {
    std::vector<std::pair<PolicyKind, std::string>> targets;
    if (!files->empty() == !args->empty()) {
      std::cerr << "claim2core delete: give either KIND NAME or -f FILE\n";
      return kExitUsage;
    }
    if (!args->empty()) {
      if (args->size() != 2) {
        std::cerr << "claim2core delete: expected KIND NAME, got " << args->size() << " arguments\n";
        return kExitUsage;
      }
      auto k = parse_kind((*args)[0]);
      if (!k) {
        std::cerr << "claim2core delete: KIND: unknown policy kind '" << (*args)[0]
                  << "' (DRAExecutionPolicy or NodeSchedulingPolicy)\n";
        return kExitUsage;
      }
      targets.emplace_back(*k, (*args)[1]);
    } else {
      auto manifests = load_or_report("delete", *files);
      if (!manifests) return kExitUsage;
      for (const auto& m : *manifests) targets.emplace_back(kind_of(m.policy), name_of(m.policy));
    }
    OutputFormat fmt = output_format_from_string(c->output);
    Session s("delete", *c);
    json results = json::array();
    int rc = kExitOk;
    for (const auto& [kind, name] : targets) {
      const std::string ref = kind_name(kind) + "/" + name;
      const reply::Delete resp = s.check(s.node().delete_policy(kind, name, *generation), ref);
      if (resp.ignored) rc = kExitServer;  // nothing deleted (no such policy, or another generation)
      if (fmt == OutputFormat::Table) std::cout << render_delete(ref, resp);
      else results.push_back({{"policy", ref}, {"result", resp.json}});
    }
    if (fmt != OutputFormat::Table) print_structured(fmt, results);
    return rc;
  }));
}

// ---- preview -------------------------------------------------------------------------------------

std::vector<c2c::AnyPolicy> stored_policies(Session& s) {
  return s.check(s.node().list_policies(), "ListPolicies").policies;
}

// A manifest without metadata.generation previews "the generation an apply would give it". When
// the daemon already holds the same spec, an apply changes nothing, so that is the stored
// generation: previewing it (and acknowledging it) is what lets an applied requirePreview policy
// go live. A changed spec keeps 0, which the daemon resolves to the next generation.
c2c::AnyPolicy with_resolved_generation(c2c::AnyPolicy p, const std::vector<c2c::AnyPolicy>& stored) {
  auto generation_of = [](const c2c::AnyPolicy& x) { return std::visit([](const auto& v) { return v.generation; }, x); };
  if (generation_of(p) != 0) return p;
  for (const auto& have : stored) {
    if (have.index() != p.index() || name_of(have) != name_of(p)) continue;
    c2c::AnyPolicy same = have;
    std::visit([](auto& v) { v.generation = 0; }, same);
    if (same == p) std::visit([&](auto& v) { v.generation = generation_of(have); }, p);
  }
  return p;
}

struct KubeTarget {
  bool enabled = false;
  std::string kubeconfig = std::getenv("KUBECONFIG") ? std::getenv("KUBECONFIG") : "";
  std::string context, server;
};

// `preview --acknowledge --kubernetes`: the cluster-wide acknowledgement (src/k8s/cluster_ack.hpp);
// the daemon is not asked (preview on a node, or read the objects' status, before acknowledging).
int acknowledge_in_kubernetes(const KubeTarget& kube, bool ack, const std::vector<PolicyManifest>& manifests) {
  if (!ack) {
    std::cerr << "preview: --kubernetes acknowledges in the cluster and needs --acknowledge\n";
    return kExitUsage;
  }
  std::string err;
  auto cfg = k8s::resolve_kube_config(kube.kubeconfig, kube.context, kube.server, /*home_default=*/true, &err);
  if (!cfg) {
    std::cerr << "preview: --kubernetes: " << err << "\n";
    return kExitUsage;
  }
  int rc = kExitOk;
  for (const auto& m : manifests) {
    k8s::ClusterAck a = k8s::acknowledge_in_cluster(*cfg, m.policy);
    (a.ok ? std::cout : std::cerr) << (a.ok ? "" : "preview: ") << m.source << ": " << a.message << "\n";
    if (!a.ok) rc = kExitServer;
  }
  return rc;
}

void add_preview(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "preview", "Show what policies would do, read-only: matched tasks, conflicts, warnings, intended vs actual");
  auto c = std::make_shared<Common>();
  auto files = std::make_shared<std::vector<std::string>>();
  auto ack = std::make_shared<bool>(false);
  cmd->add_option("-f,--filename", *files, "Policy manifest file(s); - for standard input")->required();
  cmd->add_flag("--acknowledge", *ack,
                "Record that this preview was reviewed: a requirePreview policy goes live only after a preview of "
                "its generation was acknowledged");
  auto kube = std::make_shared<KubeTarget>();
  cmd->add_flag("--kubernetes", kube->enabled,
                "With --acknowledge: acknowledge in the cluster instead (annotation "
                "claim2core.io/acknowledged-generation on the policy object, written through the Kubernetes API "
                "when the cluster's spec equals the manifest's); every node's feed passes it to its daemon");
  cmd->add_option("--kubeconfig", kube->kubeconfig, "With --kubernetes: kubeconfig (default $KUBECONFIG, ~/.kube/config, in-cluster)");
  cmd->add_option("--kube-context", kube->context, "With --kubernetes: kubeconfig context (default current-context)");
  // --server is the daemon's TCP address (add_common).
  cmd->add_option("--kube-server", kube->server, "With --kubernetes: API server URL, overriding the kubeconfig's");
  add_common(cmd, *c);
  cmd->callback(guarded(exit_code, [c, files, ack, kube]() -> int {
    auto manifests = load_or_report("preview", *files);
    if (!manifests) return kExitUsage;
    if (kube->enabled) return acknowledge_in_kubernetes(*kube, *ack, *manifests);
    OutputFormat fmt = output_format_from_string(c->output);
    Session s("preview", *c);
    const auto stored = stored_policies(s);
    json results = json::array();
    for (const auto& m : *manifests) {
      reply::Preview resp = s.check(s.node().preview(with_resolved_generation(m.policy, stored), *ack),
                                    m.source + " (" + ref_of(m.policy) + ")");
      if (resp.policy.empty()) resp.json["policy"] = resp.policy = ref_of(m.policy);
      if (fmt == OutputFormat::Table) std::cout << render_preview(resp);
      else results.push_back({{"policy", ref_of(m.policy)}, {"source", m.source}, {"result", resp.json}});
    }
    if (fmt != OutputFormat::Table) print_structured(fmt, results);
    return kExitOk;
  }));
}

// ---- get -----------------------------------------------------------------------------------------

// One resource of `get`: the RPCs that list it, as a Listing (tables.hpp). Wide listings of
// tasks also ask ListBindings for the pods' names.
std::function<Listing()> lister(Session& s, const std::string& w, const std::string& filter,
                                const client::TaskFilter& tasks, bool wide, uint32_t tid) {
  if (w.rfind("polic", 0) == 0) return [&s] { return policies_listing(s.check(s.node().list_policies(), "ListPolicies")); };
  if (w.rfind("intent", 0) == 0)
    return [&s, filter] { return intents_listing(s.check(s.node().list_intents(filter), "ListIntents")); };
  if (w.rfind("decision", 0) == 0)
    return [&s, filter, tid] {
      return decisions_listing(s.check(s.node().list_decisions(filter, tid), "ListDecisions"));
    };
  if (w.rfind("task", 0) == 0)
    return [&s, tasks, wide] {
      auto listed = s.check(s.node().list_tasks(tasks), "ListTasks");
      reply::Bindings pods;
      if (wide) pods = s.check(s.node().list_bindings(), "ListBindings");
      return tasks_listing(listed, pods.pods);
    };
  return [&s] { return bindings_listing(s.check(s.node().list_bindings(), "ListBindings")); };
}

// get -w: the listing, then the rows that changed after each of the daemon's changes (Watch),
// until Ctrl-C or --max-events changed rows. The watch is open (the daemon has subscribed it: its
// initial metadata) before the first listing, so no change between the listing and the watch is
// missed; each change lists again and prints the rows that differ (a change that leaves this
// resource as it was, e.g. a new thread under `get policies -w`, prints nothing).
//
// `event_rows` (intents): the rows an event itself carries. They are printed first, so every
// transition shows as it happened (Sent, then Applied) even when the listing that follows already
// finds a later state.
using EventRows = std::function<Listing(const reply::Change&)>;
int watch_listing(Session& s, const std::function<Listing()>& list, GetFormat fmt, uint64_t max_changes,
                  const EventRows& event_rows = {}) {
  client::ChangeStream stream = s.node().watch();
  stream.wait_subscribed();
  WatchPrinter printer(fmt);
  Listing last;
  auto show = [&] {
    Listing now = list();
    auto changes = diff_listings(last, now);
    std::cout << printer.print(now, changes);
    std::cout.flush();
    last = std::move(now);
    return changes.size();
  };
  show();
  reply::Change ev;
  uint64_t n = 0;
  bool enough = false;
  while (!enough && stream.next(ev)) {
    if (event_rows) {
      Listing merged = last;
      for (auto& row : event_rows(ev).rows) {
        auto it = std::find_if(merged.rows.begin(), merged.rows.end(), [&](const ListingRow& r) { return r.name == row.name; });
        if (it != merged.rows.end()) *it = std::move(row);
        else merged.rows.push_back(std::move(row));
      }
      auto changes = diff_listings(last, merged);
      std::cout << printer.print(merged, changes);
      last = std::move(merged);
      n += changes.size();
    }
    n += show();
    enough = max_changes != 0 && n >= max_changes;
  }
  if (enough) stream.cancel();
  auto err = stream.finish();
  if (!enough && err) s.fail(*err, "Watch");
  return kExitOk;
}

void add_get(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "get", "List policies, intents, tasks, claim bindings or controller decisions (-w: then watch for changes)");
  auto c = std::make_shared<Common>();
  auto what = std::make_shared<std::string>();
  auto filter = std::make_shared<std::string>();
  auto comm = std::make_shared<std::string>();
  auto watch = std::make_shared<bool>(false);
  auto max_events = std::make_shared<uint64_t>(0);
  auto title = std::make_shared<std::string>();
  auto tgid = std::make_shared<uint32_t>(0);
  auto all = std::make_shared<bool>(false);
  auto tid = std::make_shared<uint32_t>(0);
  cmd->add_option("resource", *what, "policies | intents | tasks | bindings | decisions")
      ->required()
      ->check(CLI::IsMember({"policies", "policy", "intents", "intent", "tasks", "task", "bindings", "binding",
                             "decisions", "decision"}));
  cmd->add_option("name", *filter, "intents, decisions: only this policy's (decisions: <name> or <Kind>/<name>)");
  cmd->add_option("--tid", *tid, "decisions: only those that measured or acted on this thread")
      ->check(CLI::Range(1u, 4194304u));
  cmd->add_option("--comm", *comm, "tasks: only those whose comm matches this RE2 regex");
  cmd->add_option("--title", *title, "tasks: only those whose process title (argv[0]) matches this RE2 regex");
  cmd->add_option("--tgid,--pid", *tgid, "tasks: only the threads of this process")->check(CLI::Range(1u, 4194304u));
  cmd->add_flag("--all", *all,
                "tasks: every task, also those without a policy entry (default when --comm, --title or --tgid is "
                "given; without a filter only tasks with an entry are listed)");
  cmd->add_flag("-w,--watch", *watch,
                "After the listing, print each row that is added, modified or deleted as the daemon changes "
                "(Watch), with an EVENT column (-o json: one {type, object} a line)");
  cmd->add_option("--max-events", *max_events, "With -w: stop after this many changed rows (0: never)");
  add_common(cmd, *c, {"table", "wide", "name", "json", "yaml"});
  cmd->callback(guarded(exit_code, [c, what, filter, comm, watch, max_events, title, tgid, all, tid]() -> int {
    GetFormat fmt = get_format_from_string(c->output);
    Session s("get", *c);
    // A host runs thousands of threads: with no filter, only those with a policy entry.
    const client::TaskFilter task_req{*comm, *title, *tgid, !*all && comm->empty() && title->empty() && *tgid == 0};
    auto list = lister(s, *what, *filter, task_req, fmt == GetFormat::Wide, *tid);
    EventRows event_rows;
    if (what->rfind("intent", 0) == 0)
      event_rows = [f = *filter](const reply::Change& ev) {
        std::vector<reply::Intent> carried;
        for (const auto& i : ev.intents)
          if (f.empty() || i.policy == f) carried.push_back(i);
        return intents_listing(carried);
      };
    if (*watch) return watch_listing(s, list, fmt, *max_events, event_rows);
    std::cout << render_listing(list(), fmt);
    return kExitOk;
  }));
}

// ---- explain, status, watch ----------------------------------------------------------------------

void add_explain(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("explain", "The whole lineage of one thread's policy entry (exit 1: no entry)");
  auto c = std::make_shared<Common>();
  auto tid = std::make_shared<uint32_t>(0);
  cmd->add_option("tid", *tid, "Thread ID")->required()->check(CLI::Range(1u, 4194304u));
  add_common(cmd, *c);
  cmd->callback(guarded(exit_code, [c, tid]() -> int {
    OutputFormat fmt = output_format_from_string(c->output);
    Session s("explain", *c);
    const reply::Explain resp = s.check(s.node().explain(*tid), "Explain");
    if (fmt == OutputFormat::Table) std::cout << render_explain(*tid, resp);
    else print_structured(fmt, resp.json);
    return resp.found ? kExitOk : kExitServer;
  }));
}

void add_status(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("status", "The daemon's state: generation, entries, scheduler, invariants");
  auto c = std::make_shared<Common>();
  add_common(cmd, *c);
  cmd->callback(guarded(exit_code, [c]() -> int {
    OutputFormat fmt = output_format_from_string(c->output);
    Session s("status", *c);
    const reply::Status resp = s.check(s.node().status(), "Status");
    if (fmt == OutputFormat::Table) std::cout << render_status(resp);
    else print_structured(fmt, resp.json);
    return kExitOk;
  }));
}

void add_watch(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "watch", "Stream changes (node generation, the event that caused it, changed TIDs, intents) until Ctrl-C");
  auto c = std::make_shared<Common>();
  auto max_events = std::make_shared<uint64_t>(0);
  cmd->add_option("--max-events", *max_events, "Stop after this many changes (0: never)");
  add_common(cmd, *c);
  cmd->callback(guarded(exit_code, [c, max_events]() -> int {
    OutputFormat fmt = output_format_from_string(c->output);
    Session s("watch", *c);
    client::ChangeStream stream = s.node().watch();
    // The states as of the subscription, so the first transition of each intent has its "from".
    stream.wait_subscribed();
    std::map<std::string, node::IntentState> states;
    if (fmt == OutputFormat::Table)
      for (const auto& i : s.check(s.node().list_intents(), "ListIntents"))
        states[policy_kind_name(i.kind) + "/" + i.policy] = i.state;
    reply::Change ev;
    uint64_t n = 0;
    while (stream.next(ev)) {
      if (fmt == OutputFormat::Table) std::cout << render_change(ev) << render_intent_transitions(ev, states);
      else if (fmt == OutputFormat::Json) std::cout << ev.json.dump() << "\n";  // JSON Lines
      else std::cout << "---\n" << json_to_yaml(ev.json);
      std::cout.flush();
      if (*max_events != 0 && ++n >= *max_events) {
        stream.cancel();
        break;
      }
    }
    auto err = stream.finish();
    if (*max_events != 0 && n >= *max_events) return kExitOk;
    if (err) s.fail(*err, "Watch");
    return kExitOk;
  }));
}

}  // namespace

void add_daemon_commands(CLI::App& app, int& exit_code) {
  add_apply(app, exit_code);
  add_delete(app, exit_code);
  add_preview(app, exit_code);
  add_get(app, exit_code);
  add_explain(app, exit_code);
  add_status(app, exit_code);
  add_watch(app, exit_code);
}

}  // namespace c2c::cli

// Human-readable output (the default `-o table`) of the daemon's replies. Pure functions from
// the client library's replies (api/replies.hpp) to text, so they are tested without a daemon.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/replies.hpp"
#include "cli/listing.hpp"

namespace c2c::cli {

// Columns padded to the widest cell; the last column is not padded.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  // Each cell as terminal_text (core/names.hpp): a name or a text that quotes one can neither move
  // the cursor nor add a row or a column.
  void add(std::vector<std::string> row);
  std::string render() const { return render(true, {}); }
  // Columns at least `min_width` wide (so rows printed later line up under an earlier header).
  std::string render(bool with_header, const std::vector<size_t>& min_width) const;
  std::vector<size_t> widths(const std::vector<size_t>& min_width = {}) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

std::string intent_state_name(node::IntentState s);           // Pending, Sent, Applied, Failed
std::string policy_kind_name(const std::optional<PolicyKind>& k);  // DRAExecutionPolicy, NodeSchedulingPolicy
std::string format_ns(uint64_t ns);                              // 2000000 -> "2ms"
std::string rfc3339_utc(int64_t unix_ms);                        // "2026-12-07T06:30:00Z", "-" for 0

// The listing of each `get` resource (columns, -o name, -o json items); render_* are its tables.
// Policies' items are their manifests (so `get policies -o yaml` can be applied again); the
// others' items are the daemon's messages in JSON. Wide columns that need the pods take them from
// ListBindings (`pods`, may be empty).
Listing policies_listing(const reply::Policies& r);
Listing intents_listing(const std::vector<reply::Intent>& r);
Listing tasks_listing(const std::vector<reply::Task>& r, const std::vector<reply::PodInfo>& pods = {});
Listing bindings_listing(const reply::Bindings& r);

std::string render_policies(const reply::Policies& r);
std::string render_intents(const std::vector<reply::Intent>& r);
std::string render_tasks(const std::vector<reply::Task>& r);
std::string render_bindings(const reply::Bindings& r);
std::string render_status(const reply::Status& r);
std::string render_explain(uint32_t tid, const reply::Explain& r);
std::string render_preview(const reply::Preview& r);
std::string render_upsert(const std::string& ref, const reply::Upsert& r);
std::string render_delete(const std::string& ref, const reply::Delete& r);
std::string render_change(const reply::Change& e);  // one line per event (watch)
// The intent transitions an event carries, one line each ("  intent <Kind>/<name>@<gen>: Sent ->
// Applied (reason)"), against `last` (the states seen so far, keyed "<Kind>/<name>"; updated).
// An intent not seen before comes from "New".
std::string render_intent_transitions(const reply::Change& e, std::map<std::string, node::IntentState>& last);

}  // namespace c2c::cli

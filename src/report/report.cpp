#include "report/report.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/core.hpp"
#include "core/fnv.hpp"
#include "fuzz/event_source.hpp"
#include "codec/trace_codec.hpp"
#include "trace/render.hpp"

namespace c2c::report {
namespace {

std::string to_jsonl(const std::vector<Event>& events) {
  std::string out;
  for (const auto& e : events) out += codec::encode_event(e).dump() + "\n";
  return out;
}

// The events as a regression file will hold them: written with the codec and read back, so the
// minimized failure is the one `claim2core replay` sees. nullopt when the codec refuses one.
std::optional<std::vector<Event>> through_codec(const std::vector<Event>& events) {
  std::istringstream in(to_jsonl(events));
  auto parsed = codec::parse_trace(in);
  if (std::holds_alternative<codec::ParseError>(parsed)) return std::nullopt;
  std::vector<Event> out;
  for (auto& te : std::get<std::vector<codec::TraceEvent>>(parsed)) out.push_back(std::move(te.event));
  return out;
}

// The entry the failure is about: the violation's own lineage, else explain(tid) just before the
// failing step (the entry may be gone after it).
std::optional<Lineage> lineage_of(const std::vector<Event>& events, const fuzz::Failure& f) {
  if (f.lineage) return f.lineage;
  if (f.tid == 0) return std::nullopt;
  Core core;
  for (size_t i = 0; i + 1 < f.step && i < events.size(); ++i) core.apply(events[i]);
  if (auto l = core.explain(f.tid)) return l;
  if (f.step >= 1 && f.step <= events.size()) core.apply(events[f.step - 1]);
  return core.explain(f.tid);
}

}  // namespace

std::string short_hash(const std::string& text) {
  const uint64_t h = fnv1a64(text);  // stable across machines and runs
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(h ^ (h >> 32)));
  return buf;
}

std::variant<Input, std::string> load_input(const std::string& bytes) {
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && bytes[first] == '{') {
    std::istringstream in(bytes);
    auto parsed = codec::parse_trace(in);
    if (auto* err = std::get_if<codec::ParseError>(&parsed)) return "malformed trace: " + err->to_string();
    Input input{"trace", {}};
    for (auto& te : std::get<std::vector<codec::TraceEvent>>(parsed)) input.events.push_back(std::move(te.event));
    return input;
  }
  return Input{"fuzz_core_events input",
               fuzz::decode_events(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size())};
}

std::optional<Report> make_report(const Input& input) {
  auto first = fuzz::run_checked(input.events);
  if (!first) return std::nullopt;

  Report r;
  r.input_kind = input.kind;
  r.original_events = input.events.size();
  r.original = *first;
  const std::string invariant = first->invariant;

  // Only the events up to the failing step matter.
  std::vector<Event> events(input.events.begin(), input.events.begin() + static_cast<std::ptrdiff_t>(first->step));

  // Prefer a trace that `claim2core replay` can run to the end: it survives the codec and the
  // core refuses none of its events (replay stops at a refused event).
  fuzz::CheckOptions strict;
  strict.reject_invalid = true;
  auto replayable_fails = [&](const std::vector<Event>& candidate) {
    auto coded = through_codec(candidate);
    if (!coded) return false;
    auto f = fuzz::run_checked(*coded, strict);
    return f && f->invariant == invariant;
  };
  auto raw_fails = [&](const std::vector<Event>& candidate) {
    auto f = fuzz::run_checked(candidate);
    return f && f->invariant == invariant;
  };

  // Events the core refuses change nothing (INV-3 checks that), so dropping them keeps the failure
  // unless the failure is about a refusal itself.
  std::vector<Event> accepted;
  {
    Core core;
    for (const auto& e : events)
      if (core.apply(e).status != ApplyResult::Status::Invalid) accepted.push_back(e);
  }
  ++r.runs;
  if (replayable_fails(accepted)) {
    r.minimized = ddmin(std::move(accepted), replayable_fails, r.runs);
  } else {
    r.replayable = false;
    r.minimized = ddmin(std::move(events), raw_fails, r.runs);
  }
  r.failure = *fuzz::run_checked(r.minimized);  // the minimized sequence fails by construction
  r.trace_jsonl = to_jsonl(r.minimized);
  r.name = r.failure.invariant + "-" + short_hash(r.trace_jsonl);
  r.lineage = lineage_of(r.minimized, r.failure);
  r.expect = {{"invariant", r.failure.invariant},
              {"failedAtStep", r.failure.step},
              {"event", r.failure.event_kind},
              {"message", r.failure.message},
              {"source", r.input_kind},
              {"expect", "every invariant holds at every step: `claim2core replay` and `claim2core report` exit 0"}};
  return r;
}

std::string render(const Report& r) {
  std::ostringstream o;
  o << "FAILURE\n  " << r.failure.invariant << " broken at step " << r.failure.step << " (" << r.failure.event_kind
    << ") of the minimized trace\n  " << r.failure.message << "\n";
  if (r.original.step != r.failure.step || r.original.message != r.failure.message)
    o << "  (first seen at step " << r.original.step << " of the input, " << r.original.event_kind << ": "
      << r.original.message << ")\n";
  o << "\nINPUT\n  " << r.input_kind << ", " << r.original_events << " events; minimized to " << r.minimized.size()
    << " events by delta debugging (" << r.runs << " runs, keeping the same invariant broken)\n";
  if (!r.replayable)
    o << "  note: the failure needs an event the core refuses, so `claim2core replay` stops there (exit 2)\n";
  o << "\nLINEAGE\n";
  if (r.lineage) o << "  " << trace::to_json(*r.lineage).dump() << "\n";
  else o << "  none: the failure is not about a single entry\n";
  o << "\nMINIMIZED TRACE\n";
  size_t step = 0;
  std::istringstream lines(r.trace_jsonl);
  for (std::string line; std::getline(lines, line);)
    o << (++step == r.failure.step ? "> " : "  ") << line << "\n";
  o << "\nREGRESSION\n  tests/regressions/" << r.name << ".jsonl (trace) and " << r.name
    << ".expect (what it guards): " << r.expect["expect"].get<std::string>() << "\n";
  return o.str();
}

std::filesystem::path write_regression(const Report& r, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const auto trace_path = dir / (r.name + ".jsonl");
  std::ofstream(trace_path) << r.trace_jsonl;
  std::ofstream(dir / (r.name + ".expect")) << r.expect.dump(2) << "\n";
  return trace_path;
}

}  // namespace c2c::report

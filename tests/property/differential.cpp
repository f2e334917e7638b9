#include "differential.hpp"

#include <sstream>

#include "compare.hpp"
#include "trace/event_codec.hpp"

namespace c2c::property {

namespace {

const char* status_text(ApplyResult::Status s) {
  switch (s) {
    case ApplyResult::Status::Applied: return "Applied";
    case ApplyResult::Status::Ignored: return "Ignored";
    case ApplyResult::Status::Invalid: return "Invalid";
  }
  return "?";
}
const char* status_text(naive::Status s) {
  switch (s) {
    case naive::Status::Applied: return "Applied";
    case naive::Status::Ignored: return "Ignored";
    case naive::Status::Invalid: return "Invalid";
  }
  return "?";
}
bool same(ApplyResult::Status a, naive::Status b) {
  return static_cast<int>(a) == static_cast<int>(b);
}

}  // namespace

Differential::Differential(naive::Options o) : model_(o) {}

std::optional<std::string> Differential::step(const Event& e) {
  trace_.push_back(e);
  std::ostringstream os;
  const std::string before = core_.digest();
  const StepContext ctx = core_.step_context(e);
  const ApplyResult r = core_.apply(e);
  const naive::Outcome o = model_.apply(e);

  if (!same(r.status, o.status)) {
    os << "status: core " << status_text(r.status) << " (" << r.field << " " << r.message
       << ") model " << status_text(o.status) << " (" << o.field << " " << o.message << ")\n";
  }
  if (r.status != ApplyResult::Status::Applied && core_.digest() != before)
    os << "INV-3: an " << status_text(r.status) << " event changed the core's digest\n";

  // Determinism: a copy fed the same events must end in the same state.
  if (trace_.size() % 9 == 1) {
    copy_ = core_;
  } else {
    copy_.apply(e);
    if (copy_.digest() != core_.digest()) os << "determinism: the copied core's digest differs\n";
  }

  if (core_.generation() != model_.generation())
    os << "generation: core " << core_.generation() << " model " << model_.generation() << "\n";
  if (core_.restart_epoch() != model_.epoch())
    os << "restart epoch: core " << core_.restart_epoch() << " model " << model_.epoch() << "\n";
  if (core_.loading() != model_.loading())
    os << "loading: core " << core_.loading() << " model " << model_.loading() << "\n";
  if (core_.now() != model_.now()) os << "now: core " << core_.now() << " model " << model_.now() << "\n";
  if (auto d = diff_desired(core_, model_)) os << "desired table differs:\n" << *d;
  if (auto d = diff_plan(core_.plan(), model_.plan())) os << "plan differs:\n" << *d;
  if (auto v = core_.check(); !v.empty()) os << "check() reports violations:\n" << describe(v);
  if (auto v = core_.check_step(ctx, r); !v.empty())
    os << "check_step() reports violations:\n" << describe(v);

  if (os.str().empty()) return std::nullopt;
  return "step " + std::to_string(trace_.size()) + " (" + event_kind(e) + "):\n" + os.str();
}

std::string Differential::trace_jsonl() const {
  std::string out;
  for (const auto& e : trace_) out += trace::encode_event(e).dump() + "\n";
  return out;
}

}  // namespace c2c::property

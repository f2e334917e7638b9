#include "fuzz/checked_run.hpp"

#include <exception>

#include "codec/trace_codec.hpp"

#ifdef C2C_FUZZ_HAVE_NAIVE
#include "compare.hpp"
#include "naive_model.hpp"
#endif

namespace c2c::fuzz {
namespace {

const char* status_name(int s) {
  switch (s) {
    case 0: return "Applied";
    case 1: return "Ignored";
    default: return "Invalid";
  }
}

// The codec must read back what it writes, or `claim2core report` would write regression
// traces that replay something else than what failed.
std::optional<std::string> round_trip_error(const Event& e) {
  try {
    const nlohmann::json once = codec::encode_event(e);
    const nlohmann::json twice = codec::encode_event(codec::decode_event(once));
    if (once != twice) return "encode(decode(encode(e))) differs: " + once.dump() + " vs " + twice.dump();
  } catch (const std::exception& ex) {
    return std::string("an applied event does not decode after encoding: ") + ex.what();
  }
  return std::nullopt;
}

}  // namespace

bool have_naive_model() {
#ifdef C2C_FUZZ_HAVE_NAIVE
  return true;
#else
  return false;
#endif
}

std::optional<Failure> run_checked(const std::vector<Event>& events, const CheckOptions& options) {
  Core core;
  Core copy;  // fed the same events; must stay identical (determinism, copy constructor)
#ifdef C2C_FUZZ_HAVE_NAIVE
  naive::NaiveModel model;
#endif
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    Failure f;
    f.step = i + 1;
    f.event_kind = event_kind(e);
    auto fail = [&](std::string invariant, std::string message) {
      f.invariant = std::move(invariant);
      f.message = std::move(message);
      return f;
    };

    const std::string before = core.digest();
    const StepContext ctx = core.step_context(e);
    const ApplyResult r = core.apply(e);

    if (options.reject_invalid && r.status == ApplyResult::Status::Invalid)
      return fail("invalid-input", r.field + ": " + r.message);
    if (r.status != ApplyResult::Status::Applied && core.digest() != before)
      return fail("INV-3", std::string("an ") + status_name(static_cast<int>(r.status)) +
                               " event changed the state (digest differs): " + r.message);

    // Transition properties first (INV-4, INV-5 step), then the state predicates.
    std::vector<Violation> violations = core.check_step(ctx, r);
    std::vector<Violation> state = core.check();
    violations.insert(violations.end(), state.begin(), state.end());
    if (!violations.empty()) {
      const Violation& v = violations.front();
      f.lineage = v.lineage;
      f.tid = v.tid;
      return fail(v.invariant, v.message);
    }

    if (i % 8 == 0) {
      copy = core;  // exercise the copy constructor/assignment too
    } else {
      copy.apply(e);
    }
    if (copy.digest() != core.digest())
      return fail("determinism", "a copy of the core fed the same events has a different digest");

    if (options.codec_round_trip && r.status == ApplyResult::Status::Applied)
      if (auto err = round_trip_error(e)) return fail("codec", *err);

#ifdef C2C_FUZZ_HAVE_NAIVE
    if (options.naive_model) {
      const naive::Outcome o = model.apply(e);
      std::string diff;
      if (static_cast<int>(o.status) != static_cast<int>(r.status))
        diff += std::string("status: core ") + status_name(static_cast<int>(r.status)) + " (" + r.field + " " +
                r.message + "), model " + status_name(static_cast<int>(o.status)) + " (" + o.field + " " +
                o.message + ")\n";
      if (core.generation() != model.generation())
        diff += "generation: core " + std::to_string(core.generation()) + ", model " +
                std::to_string(model.generation()) + "\n";
      if (auto d = property::diff_desired(core, model)) diff += "desired table differs:\n" + *d;
      if (auto d = property::diff_plan(core.plan(), model.plan())) diff += "plan differs:\n" + *d;
      if (!diff.empty()) return fail("naive-model", diff);
    }
#else
    (void)options.naive_model;
#endif
  }
  return std::nullopt;
}

}  // namespace c2c::fuzz

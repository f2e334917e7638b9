// fuzz_core_events: bytes -> a sequence of events over a small universe (event_source.hpp) ->
// c2c::Core, with every check of checked_run.hpp after every step. On a failure it prints the
// step, the invariant, the message and the events up to the failing step as a trace; feed the
// saved input to `claim2core report` for a minimized trace and a regression file.
#include <cstdint>
#include <cstdio>
#include <string>

#include "boundary_hits.hpp"
#include "fuzz/checked_run.hpp"
#include "fuzz/event_source.hpp"
#include "fuzz/harness_support.hpp"
#include "codec/trace_codec.hpp"
#include "trace/render.hpp"

// Says once which checks this build runs, so a log shows whether the naive model was compared.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  std::fprintf(stderr,
               "fuzz_core_events: after every step: INV-1..INV-8 (check, check_step), Ignored/Invalid "
               "leave the digest unchanged, determinism, codec, naive-model %s\n",
               c2c::fuzz::have_naive_model() ? "ON" : "OFF (not built in)");
  return 0;
}

namespace {
// The boundaries the corpus reaches (issue 45), reported by the replay driver at the end.
c2c::testing::BoundaryHits g_hits;
}  // namespace

// Called by replay_main.cpp after the corpus: prints the hits; non-zero when one was never hit.
extern "C" int c2c_fuzz_replay_summary() {
  std::printf("fuzz_core_events: %s\n", g_hits.to_string().c_str());
  const auto missed = g_hits.missed();
  for (const auto& m : missed) std::fprintf(stderr, "fuzz_core_events: boundary never hit by the corpus: %s\n", m.c_str());
  return missed.empty() ? 0 : 1;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<c2c::Event> events = c2c::fuzz::decode_events(data, size, c2c::fuzz::kMaxEvents, &g_hits);
  const auto failure = c2c::fuzz::run_checked(events);
  if (!failure) return 0;
  std::fprintf(stderr, "fuzz_core_events: %s violated at step %zu (%s): %s\n", failure->invariant.c_str(),
               failure->step, failure->event_kind.c_str(), failure->message.c_str());
  if (failure->lineage)
    std::fprintf(stderr, "lineage: %s\n", c2c::trace::to_json(*failure->lineage).dump().c_str());
  std::fprintf(stderr, "trace up to the failing step:\n");
  for (size_t i = 0; i < failure->step && i < events.size(); ++i)
    std::fprintf(stderr, "%s\n", c2c::codec::encode_event(events[i]).dump().c_str());
  c2c::fuzz::die();
}

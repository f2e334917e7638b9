// Turns fuzzer bytes into a sequence of core events over a deliberately SMALL universe (four tids
// with reuse, three claims, two pods, two policies of each kind, a handful of cpusets), so that
// random bytes collide on the same identities often enough to reach TID reuse, stale claims,
// resurrection attempts and restarts. Pure: the same bytes always give the same events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/events.hpp"

namespace c2c::testing {
class BoundaryHits;
}

namespace c2c::fuzz {

inline constexpr size_t kMaxEvents = 64;

// Each event reads an opcode byte and a few parameter bytes from the front; missing bytes read
// as zero. Events whose parameters depend on the state (bpf_observed built from the desired
// table, preview of the current generation, time that moves forward) are decoded against a
// shadow core that applies every decoded event, so the result is still a function of the bytes.
// `hits`, when given, counts the boundaries the decoded events reach (tests/property/boundary_hits.hpp).
std::vector<Event> decode_events(const uint8_t* data, size_t size, size_t max_events = kMaxEvents,
                                 testing::BoundaryHits* hits = nullptr);

}  // namespace c2c::fuzz

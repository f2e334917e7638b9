// The node policy the daemon benchmarks upsert: one name, one generation, a comm regex and the
// slice the map entry gets (the benchmarks look for that slice in the pinned map).
#pragma once

#include <cstdint>
#include <string>

#include "claim2core.pb.h"

namespace c2c::bench {

inline claim2core::v1::Policy node_policy(const std::string& name, int64_t gen, const std::string& regex, uint64_t slice) {
  claim2core::v1::Policy p;
  auto* n = p.mutable_node();
  n->set_name(name);
  n->set_generation(gen);
  n->add_node_names("bench-node");
  n->set_command_regex(regex);
  n->set_priority(1);
  n->set_execution_time_ns(slice);
  return p;
}

}  // namespace c2c::bench

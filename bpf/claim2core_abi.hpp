// The shared BPF ABI header (claim2core_abi.h, beside this file) for C++: the one include of it
// for the host plane and the mirror, with what it needs in scope and the compile-time checks that
// the core's constants agree with the scheduler's.
#pragma once

#include <cstddef>  // offsetof, used by the header's static_asserts
#include <cstdint>

#include <linux/types.h>

#include "claim2core_abi.h"
#include "core/cpuset.hpp"
#include "core/runtime_entry.hpp"

namespace c2c::bpf_abi {

namespace abi_check {
static_assert(c2c::kMaxCpus == C2C_MAX_CPUS, "core kMaxCpus must equal C2C_MAX_CPUS");
static_assert(c2c::CpuSet::kWords == C2C_CPUMASK_WORDS, "CpuSet words must match the BPF cpumask");
inline constexpr unsigned u(unsigned v) { return v; }
static_assert(u(c2c::kFlagBoost) == u(C2C_F_BOOST) && u(c2c::kFlagCustomSlice) == u(C2C_F_CUSTOM_SLICE) &&
                  u(c2c::kFlagAllowedCpus) == u(C2C_F_ALLOWED_CPUS) &&
                  u(c2c::kFlagPreferredCpus) == u(C2C_F_PREFERRED_CPUS) && u(c2c::kFlagInherited) == u(C2C_F_INHERITED) &&
                  u(c2c::kFlagWakeeBoost) == u(C2C_F_WAKEE_BOOST) && u(c2c::kFlagWakeeDepth2) == u(C2C_F_WAKEE_DEPTH2),
              "core RuntimeFlags must mirror enum c2c_policy_flags");
static_assert(u(static_cast<unsigned>(c2c::ExecClass::Unmatched)) == u(C2C_CLASS_UNMATCHED) &&
                  u(static_cast<unsigned>(c2c::ExecClass::LatencyCritical)) == u(C2C_CLASS_LATENCY_CRITICAL) &&
                  u(static_cast<unsigned>(c2c::ExecClass::CommunicationProgress)) == u(C2C_CLASS_COMM_PROGRESS) &&
                  u(static_cast<unsigned>(c2c::ExecClass::Throughput)) == u(C2C_CLASS_THROUGHPUT) &&
                  u(static_cast<unsigned>(c2c::ExecClass::Background)) == u(C2C_CLASS_BACKGROUND) &&
                  u(static_cast<unsigned>(c2c::ExecClass::Normal)) == u(C2C_CLASS_NORMAL),
              "core ExecClass must mirror enum c2c_exec_class");
static_assert(c2c::class_default_slice(c2c::ExecClass::LatencyCritical) == C2C_SLICE_LATENCY_CRITICAL_NS &&
                  c2c::class_default_slice(c2c::ExecClass::CommunicationProgress) == C2C_SLICE_COMM_PROGRESS_NS &&
                  c2c::class_default_slice(c2c::ExecClass::Throughput) == C2C_SLICE_THROUGHPUT_NS &&
                  c2c::class_default_slice(c2c::ExecClass::Background) == C2C_SLICE_BACKGROUND_NS &&
                  c2c::class_default_slice(c2c::ExecClass::Normal) == C2C_DEFAULT_SLICE_NS,
              "the core's class slices must be the scheduler's (bpf/claim2core_abi.h)");
static_assert(sizeof(c2c_task_record) == 48);
}  // namespace abi_check

}  // namespace c2c::bpf_abi

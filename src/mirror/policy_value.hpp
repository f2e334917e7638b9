// RuntimeValue (the core's C++ view) <-> struct c2c_policy_value (the kernel map's bytes).
#pragma once

#include <optional>
#include <string>

#include "core/runtime_entry.hpp"
#include "claim2core_abi.hpp"

namespace c2c::mirror {

// Always stamps abi_version = C2C_ABI_VERSION. Total: every RuntimeValue has an encoding.
c2c_policy_value to_abi(const RuntimeValue& v);

// Decodes without judging: unknown classes/flags are kept as they are so that the core sees
// (and plans to remove) whatever is really in the map (INV-5).
RuntimeValue from_abi(const c2c_policy_value& v);

// Why a value may not be written, naming the field ("value.exec_class"), or nullopt if it may.
std::optional<std::string> check_writable(const RuntimeValue& v);

// Why a value read from the map does not follow this ABI (e.g. injected by hand), or nullopt.
std::optional<std::string> check_decoded(const c2c_policy_value& v);

}  // namespace c2c::mirror

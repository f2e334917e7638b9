// The shared BPF ABI header (bpf/claim2core_abi.h) for C++, with what it needs in scope.
#pragma once

#include <cstddef>  // offsetof, used by the header's static_asserts

#include <linux/types.h>

#include "claim2core_abi.h"

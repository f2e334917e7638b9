// The `prefer` scenario (issue #16): a probe whose policy prefers the CPUs local to a PCI device
// runs on them, against the no-policy baseline, measured with the scheduler's per-task counters.
#pragma once

#include <string>

namespace c2c::vm {

// device: a PCI bus id ("0000:81:00.0"), whose local CPUs the host plane (src/host/topology)
// reads from /sys. Prints one JSON line; 0 pass, 1 fail.
int cmd_prefer(const std::string& device, int duration_ms);

}  // namespace c2c::vm

// Finding the compiled BPF objects (task_iter.bpf.o, task_events.bpf.o).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace c2c::host {

// Candidate directories, in order: $C2C_BPF_DIR, the build tree's BPF output directory (compile
// definition C2C_BPF_BUILD_DIR), <executable dir>/../lib/claim2core/bpf, /usr/lib/claim2core/bpf.
std::vector<std::filesystem::path> bpf_object_dirs();

// "<dir>/<name>.bpf.o" in the first candidate directory that has it; nullopt with *err listing
// every place that was tried.
std::optional<std::filesystem::path> find_bpf_object(const std::string& name, std::string* err = nullptr);

}  // namespace c2c::host

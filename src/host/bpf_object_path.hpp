// Finding the compiled BPF objects (task_iter, task_events, policy_maps, claim2core .bpf.o).
// No build path is compiled in: an installed binary looks next to its own install prefix, and
// a binary run from a build tree finds that tree from its own location.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace c2c::host {

// The daemon's config `bpf_dir`: searched before everything else ("" clears it).
void set_bpf_object_dir_override(const std::string& dir);

// Install-relative directory of the objects (CMake: C2C_INSTALL_BPFDIR relative to the bindir).
inline constexpr const char* kInstallRelativeBpfDir = "../lib/claim2core";

// The build tree an executable runs from: its nearest ancestor directory holding CMakeCache.txt
// (nullopt for an installed binary).
std::optional<std::filesystem::path> build_tree_of(const std::filesystem::path& exe);

// Candidate directories, in order: the config override, $C2C_BPF_DIR, <exe dir>/../lib/claim2core
// (the install layout), <build tree>/bpf (only for an executable inside a build tree: the
// build-tree fallback), /usr/lib/claim2core.
std::vector<std::filesystem::path> bpf_object_dirs();

// "<dir>/<name>.bpf.o" in the first candidate directory that has it; nullopt with *err listing
// every place that was tried.
std::optional<std::filesystem::path> find_bpf_object(const std::string& name, std::string* err = nullptr);

}  // namespace c2c::host

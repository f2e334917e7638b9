// Replay driver: runs every file of the given corpus directories (or single files) through the
// harness's LLVMFuzzerTestOneInput, without libFuzzer, so that the committed corpus is a plain
// regression test in the gcc build. A failing check aborts (non-zero exit, file named on stderr).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/harness_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Optional, as under libFuzzer: a harness that defines it is initialized once before the inputs.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);
// Optional: a harness's summary of the whole corpus (fuzz_core_events: the boundaries it reached,
// issue 45); non-zero fails the replay.
extern "C" __attribute__((weak)) int c2c_fuzz_replay_summary();

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path p(argv[i]);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& entry : fs::directory_iterator(p))
        if (entry.is_regular_file()) inputs.push_back(entry.path());
    } else if (fs::is_regular_file(p, ec)) {
      inputs.push_back(p);
    } else {
      std::fprintf(stderr, "%s: no such file or directory\n", argv[i]);
      return 2;
    }
  }
  // An empty corpus would make this test pass while checking nothing.
  if (inputs.empty()) {
    std::fprintf(stderr, "no inputs found: the corpus is empty\n");
    return 1;
  }
  std::sort(inputs.begin(), inputs.end());
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string name = path.string();
    c2c::fuzz::g_current_input = name.c_str();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  c2c::fuzz::g_current_input = nullptr;
  std::printf("replayed %zu inputs, every check held\n", inputs.size());
  return c2c_fuzz_replay_summary != nullptr ? c2c_fuzz_replay_summary() : 0;
}

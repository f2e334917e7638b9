// setproctitle's Linux behaviour (py-setproctitle spt_setup.c / spt_status.c, PS_USE_CLOBBER_ARGV
// with PS_PADDING '\0', and prctl(PR_SET_NAME) in set_ps_display).
#include "proc_title.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

extern char** environ;

namespace c2c::vllm {
namespace {
char* g_area = nullptr;  // argv[0]: the start of the contiguous argv + environ strings
size_t g_area_size = 0;
}  // namespace

void init_process_title(int argc, char** argv) {
  if (argc < 1 || argv[0] == nullptr) return;
  // The area ends where the strings stop being contiguous (the kernel lays argv then environ out
  // back to back; setproctitle takes every string that follows on directly).
  char* end = argv[0] + std::strlen(argv[0]) + 1;
  for (int i = 1; i < argc; ++i)
    if (argv[i] == end) end = argv[i] + std::strlen(argv[i]) + 1;
  size_t n_env = 0;
  while (environ[n_env] != nullptr) ++n_env;
  for (size_t i = 0; i < n_env; ++i)
    if (environ[i] == end) end = environ[i] + std::strlen(environ[i]) + 1;
  // environ's strings move to the heap (they are inside the area); argv is not used after this by
  // the stand-in (its options are parsed first), as Python keeps its own copy of sys.argv.
  auto** env = new char*[n_env + 1];
  for (size_t i = 0; i < n_env; ++i) env[i] = strdup(environ[i]);
  env[n_env] = nullptr;
  environ = env;
  g_area = argv[0];
  g_area_size = static_cast<size_t>(end - argv[0]);
}

void set_process_title(const std::string& title) {
  if (g_area != nullptr && g_area_size > 1) {
    const size_t n = std::min(title.size(), g_area_size - 1);
    std::memcpy(g_area, title.data(), n);
    std::memset(g_area + n, 0, g_area_size - n);
  }
  set_thread_name(title);
}

void set_thread_name(const std::string& name) {
  // The kernel keeps the first 15 bytes (TASK_COMM_LEN 16 with the NUL).
  prctl(PR_SET_NAME, name.c_str(), 0, 0, 0);
}

}  // namespace c2c::vllm
